# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""IPMI power driver (pyghmi): chassis power on, soft off and status."""

import json
import subprocess
import sys

from nova_drs import exception
from nova_drs.power import base


class IpmiDriver(base.PowerDriver):
    """Powers the host on and asks it for a soft (ACPI) shutdown via its BMC.

    IPMI has no suspend-to-RAM, so only mode ``off`` (S5) is accepted.
    Suspend sends "soft off" (chassis control 5: the OS shuts down cleanly)
    unless the BMC already reports the chassis off; wake sends "power on";
    status is the chassis power state (on/off). Options: ``address`` and
    ``port`` (623) of the BMC, ``username``, ``password`` and the optional
    BMC key ``kg`` (both secret).

    Each call runs pyghmi in a short-lived child process (credentials on its
    stdin) killed after ``[drs_power] timeout``: pyghmi keeps sessions in
    process-wide state, and in one process a logout followed by a new login,
    or a failed login next to a live session, leaves the next call hanging.
    The child logs out before exiting, so no BMC session slot is leaked.

    Power drawn: the DCMI "Get Power Reading" command (current watts); a BMC
    without it has no figure.
    """

    NAME = 'ipmi'
    MODES = (base.MODE_OFF,)
    MEASURES = True
    OPTIONS = {
        'type': 'object',
        'additionalProperties': False,
        'required': ['address', 'username', 'password'],
        'properties': {
            'address': {'type': 'string', 'minLength': 1, 'description': 'BMC address'},
            'port': {'type': 'integer', 'minimum': 1, 'maximum': 65535,
                     'description': 'BMC UDP port (623)'},
            'username': {'type': 'string', 'minLength': 1, 'maxLength': 16},
            'password': {'type': 'string', 'maxLength': 20, 'secret': True},
            'kg': {'type': 'string', 'secret': True, 'description': 'BMC key'},
        },
    }

    def _call(self, target, action):
        request = dict(target.options, action=action)
        timeout = self.conf.drs_power.timeout
        where = 'BMC %s port %s' % (request['address'], request.get('port', 623))
        try:
            child = subprocess.run([sys.executable, '-m', __name__], input=json.dumps(request),
                                   capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise exception.PowerError('%s: no result within %s s' % (where, timeout)) from None
        try:
            answer = json.loads(child.stdout)
        except ValueError:
            raise exception.PowerError('%s: pyghmi worker exited with status %s: %s'
                                       % (where, child.returncode,
                                          child.stderr.strip()[-500:])) from None
        if 'error' in answer:
            raise exception.PowerError('%s: %s' % (where, answer['error']))
        return answer['watts'] if action == 'watts' else answer['powerstate']

    def _suspend(self, target):
        self._call(target, 'suspend')

    def _wake(self, target):
        self._call(target, 'wake')

    def _status(self, target):
        state = self._call(target, 'status')
        return {'on': base.ON, 'off': base.OFF}.get(state, base.UNKNOWN)

    def _power_watts(self, target):
        return self._call(target, 'watts')


def _worker(request):
    """Run one action against the BMC; {'powerstate'|'watts': ...} or {'error': ...}."""
    from pyghmi import exceptions
    from pyghmi.ipmi import command as ipmi_command

    try:
        bmc = ipmi_command.Command(bmc=request['address'], userid=request['username'],
                                   password=request['password'],
                                   port=request.get('port', 623), kg=request.get('kg'))
    except exceptions.IpmiException as exc:
        return {'error': str(exc) if str(exc) not in ('', 'None') else 'no answer'}
    try:
        if request['action'] == 'watts':
            return {'watts': _dcmi_watts(bmc, exceptions)}
        state = bmc.get_power()['powerstate']
        if request['action'] == 'suspend' and state != 'off':
            bmc.set_power('shutdown', wait=False)
        elif request['action'] == 'wake' and state != 'on':
            bmc.set_power('on', wait=False)
        return {'powerstate': state}
    except exceptions.IpmiException as exc:
        return {'error': str(exc) or type(exc).__name__}
    finally:
        bmc.ipmi_session.logout()


def _dcmi_watts(bmc, exceptions):
    """DCMI current watts; None when the BMC does not implement DCMI power reading."""
    try:
        return bmc.get_system_power_watts()
    except exceptions.IpmiException as exc:
        if getattr(exc, 'ipmicode', None) in _NOT_SUPPORTED:
            return None
        raise


# Completion codes of a BMC without DCMI power reading: invalid command,
# command not supported in present state, invalid data field.
_NOT_SUPPORTED = (0xc1, 0xd5, 0xcc)


if __name__ == '__main__':
    json.dump(_worker(json.load(sys.stdin)), sys.stdout)
