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

"""TEST-ONLY virtual BMCs of the mini-cloud: a host's chassis is its nova-compute process.

What VirtualBMC does for libvirt domains, for mini-cloud hosts: chassis
power on = start the host's nova-compute (``Cloud.start_compute``: same
node identity, so the same resource provider comes back), soft off / graceful
shutdown = SIGTERM to its process group, hard off = SIGKILL, power state =
whether that process lives. The daemon then talks to them with the SHIPPED
``ipmi`` and ``redfish`` power drivers, over the real protocols on loopback.

* ``python -m tests.integration.bmc ipmi --host H --port P``: one pyghmi BMC
  server (``pyghmi.ipmi.bmc.Bmc``) per host, on UDP 127.0.0.1:P.
* ``python -m tests.integration.bmc redfish --port P --hosts H1,H2``: one
  sushy-tools emulator whose systems (identity = name = the host's name, so
  ``system_id`` is the host) are driven by ``ProcessSystemsDriver``.

Credentials come from ``MINICLOUD_BMC_USER`` / ``MINICLOUD_BMC_PASSWORD``,
the mini-cloud's work directory from ``NOVA_DRS_CLOUD_DIR``. A file
``<workdir>/bmc-mute/<host>`` makes that host's BMCs drop every request (a
BMC that does not answer); ``<workdir>/bmc-noboot/<host>`` makes power on
switch the chassis on without starting nova-compute (a host that never comes
back). Removing the file restores the normal behaviour.
"""

import argparse
import os
import signal
import sys
import time

from tests.integration import cloud as minicloud


def mute_file(workdir, host):
    return os.path.join(workdir, 'bmc-mute', host)


def noboot_file(workdir, host):
    return os.path.join(workdir, 'bmc-noboot', host)


class HostChassis:
    """Power of one mini-cloud host = its nova-compute process."""

    def __init__(self, workdir, host):
        self.workdir = workdir
        self.host = host
        self.cloud = minicloud.Cloud(workdir, log=lambda line: None)

    def muted(self):
        return os.path.exists(mute_file(self.workdir, self.host))

    def _pid(self):
        return self.cloud.running().get('nova-compute-' + self.host)

    def _hung_flag(self):
        return noboot_file(self.workdir, self.host) + '.on'

    def is_on(self):
        pid = self._pid()
        return (pid is not None and minicloud._pid_alive(pid)) or \
            os.path.exists(self._hung_flag())

    def power_on(self):
        if self.is_on():
            return
        if os.path.exists(noboot_file(self.workdir, self.host)):
            with open(self._hung_flag(), 'w'):
                pass  # chassis on, but the OS never boots
            return
        self.cloud.start_compute(self.host)

    def power_off(self, hard=False):
        if os.path.exists(self._hung_flag()):
            os.unlink(self._hung_flag())
        pid = self._pid()
        if pid is not None and minicloud._pid_alive(pid):
            # Started in its own session by the mini-cloud: pgid == pid.
            os.killpg(pid, signal.SIGKILL if hard else signal.SIGTERM)


def run_ipmi(args):
    ipmi_server(HostChassis(os.environ['NOVA_DRS_CLOUD_DIR'], args.host), args.port,
                os.environ['MINICLOUD_BMC_USER'], os.environ['MINICLOUD_BMC_PASSWORD']).listen()


def ipmi_server(chassis, port, user, password):
    """A pyghmi IPMI BMC on UDP 127.0.0.1:``port`` switching ``chassis`` (an
    object with is_on, power_on, power_off(hard) and muted). Its ``listen()``
    serves every BMC of the process (pyghmi's sessions are global) and never
    returns. Also the libvirt tier's BMCs (tests/libvirt/bmc.py)."""
    import pyghmi.ipmi.bmc as bmc
    from pyghmi.ipmi.private import serversession

    class Sha1OnlySession(serversession.ServerSession):
        """Refuses RMCP+ proposals other than RAKP-HMAC-SHA1 (see tests/peers.py).

        pyghmi's server implements cipher suite 3 only but would accept the
        client's SHA-256 proposal; refusing it makes the client fall back.
        """

        def create_open_session_response(self, request):
            if request[12] != 1:
                return bytearray([request[0], 0x11, 0, 0]) + request[4:8]
            return super().create_open_session_response(request)

    serversession.ServerSession = Sha1OnlySession

    class ProcessBmc(bmc.Bmc):
        """The host's chassis power, as a BMC would report and switch it."""

        def get_power_state(self):
            return 'on' if chassis.is_on() else 'off'

        def power_on(self):
            chassis.power_on()

        def power_off(self):
            chassis.power_off(hard=True)

        def power_shutdown(self):
            chassis.power_off()

        # Muted: no answer at all (no login, no command), like a BMC that is down.
        def sessionless_data(self, data, sockaddr):
            if not chassis.muted():
                return super().sessionless_data(data, sockaddr)

        def handle_raw_request(self, request, session):
            if not chassis.muted():
                return super().handle_raw_request(request, session)

    return ProcessBmc({user: password}, port=port, address='127.0.0.1')


def run_redfish(args):
    import bcrypt
    import flask
    from sushy_tools.emulator import main as emulator
    from sushy_tools.emulator.resources.systems import fakedriver

    workdir = os.environ['NOVA_DRS_CLOUD_DIR']
    chassis = {host: HostChassis(workdir, host) for host in args.hosts.split(',')}

    class ProcessSystemsDriver(fakedriver.FakeDriver):
        """sushy-tools' fake systems whose power is the host's nova-compute process."""

        def _chassis(self, identity):
            return chassis[self.uuid(identity)]

        def get_power_state(self, identity):
            return 'On' if self._chassis(identity).is_on() else 'Off'

        def set_power_state(self, identity, state):
            host = self._chassis(identity)
            if state in ('On', 'ForceOn'):
                host.power_on()
            elif state == 'GracefulShutdown':
                host.power_off()
            elif state == 'ForceOff':
                host.power_off(hard=True)
            else:
                return super().set_power_state(identity, state)

    emulator.fakedriver.FakeDriver = ProcessSystemsDriver

    @emulator.app.before_request
    def hold_when_muted():
        parts = flask.request.path.strip('/').split('/')
        for identity in parts[3:4] if parts[:3] == ['redfish', 'v1', 'Systems'] else ():
            host = chassis.get(identity)
            if host is not None and host.muted():
                # A BMC that does not answer: hold the request past any client timeout.
                time.sleep(600)

    state = os.path.join(workdir, 'redfish')
    os.makedirs(state, exist_ok=True)
    auth_file = os.path.join(state, 'htpasswd')
    with open(auth_file, 'w') as handle:
        handle.write('%s:%s\n' % (os.environ['MINICLOUD_BMC_USER'], bcrypt.hashpw(
            os.environ['MINICLOUD_BMC_PASSWORD'].encode(), bcrypt.gensalt(rounds=4)).decode()))
    config = os.path.join(state, 'emulator.conf')
    systems = [{'uuid': host, 'name': host, 'power_state': 'On', 'nics': []}
               for host in chassis]
    with open(config, 'w') as handle:
        handle.write('SUSHY_EMULATOR_AUTH_FILE = %r\n' % auth_file)
        handle.write('SUSHY_EMULATOR_STATE_DIR = %r\n' % os.path.join(state, 'state'))
        handle.write('SUSHY_EMULATOR_FAKE_SYSTEMS = %r\n' % systems)
    sys.argv = ['sushy-emulator', '--config', config, '--fake', '-i', '127.0.0.1',
                '-p', str(args.port)]
    return emulator.main()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kinds = parser.add_subparsers(dest='kind', required=True)
    ipmi = kinds.add_parser('ipmi')
    ipmi.add_argument('--host', required=True)
    ipmi.add_argument('--port', type=int, required=True)
    redfish = kinds.add_parser('redfish')
    redfish.add_argument('--hosts', required=True)
    redfish.add_argument('--port', type=int, required=True)
    args = parser.parse_args()
    return run_ipmi(args) if args.kind == 'ipmi' else run_redfish(args)


if __name__ == '__main__':
    sys.exit(main())
