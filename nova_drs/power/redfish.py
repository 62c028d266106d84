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

"""Redfish power driver (sushy): ComputerSystem.Reset and PowerState."""

import inspect
import urllib.parse

import sushy
import sushy.auth
import sushy.connector

from nova_drs import exception
from nova_drs.power import base
from nova_drs.power import paths

_RESET_ACTION = '#ComputerSystem.Reset'
_ALLOWED = 'ResetType@Redfish.AllowableValues'

_STATUS = {
    sushy.PowerState.ON: base.ON,
    sushy.PowerState.OFF: base.OFF,
    sushy.PowerState.PAUSED: base.SUSPENDED,
}


def parse_verify(value):
    """``verify`` as sushy wants it: True, False or a CA bundle path."""
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    if lowered in paths.TRUE_WORDS:
        return True
    if lowered in paths.FALSE_WORDS:
        return False
    return str(value)



def _transport(url, verify, timeout, retries):
    """sushy's TLS, timeout and retry arguments, on every supported sushy.

    The sushy of 2026.1 and 2026.2 (5.10, 5.14) takes the timeouts itself;
    2025.2's (5.7.2) only through a Connector's default_request_timeout, which
    requests applies to connecting and reading alike: the same value here.
    """
    kwargs = {'verify': verify, 'server_side_retries': retries,
              'server_side_retries_delay': 1}
    if 'read_timeout' in inspect.signature(sushy.Sushy).parameters:
        return dict(kwargs, read_timeout=timeout, connect_timeout=timeout)
    return dict(kwargs, connector=sushy.connector.Connector(
        url, default_request_timeout=timeout, **kwargs))

class RedfishDriver(base.PowerDriver):
    """Powers the host's ComputerSystem on and off through its Redfish BMC.

    Mode ``off``: suspend = ``GracefulShutdown``; with
    ``force_off_fallback`` true, ``ForceOff`` when the BMC does not offer or
    rejects GracefulShutdown. Mode ``s3``: suspend = ``Suspend``, only if
    the BMC lists it in ``ResetType@Redfish.AllowableValues`` (Redfish has
    no S3 proper; its Suspend keeps the state and restores it on power on),
    else a PowerError. Wake = ``Resume`` for a ``Paused`` system when
    offered, else ``On``. Status: On -> on, Off -> off, Paused ->
    suspended, PoweringOn/PoweringOff -> unknown. Options: ``url``
    (https://bmc, no credentials inside), ``username``, ``password``
    (secret), ``system_id`` (needed when the BMC has several systems),
    ``verify`` (bool or CA path, default ``[drs_power] redfish_verify``; a
    host's own CA path must be in ``[drs_power] files_dir``),
    ``force_off_fallback``.

    Power drawn: ``PowerControl[].PowerConsumedWatts`` of the Power resource
    of the first chassis the system links to that has one.
    """

    NAME = 'redfish'
    MODES = base.MODES
    MEASURES = True
    OPTIONS = {
        'type': 'object',
        'additionalProperties': False,
        'required': ['url'],
        'properties': {
            'url': {'type': 'string', 'pattern': '^https?://[^/@]+',
                    'description': 'BMC base URL, e.g. https://10.0.0.5'},
            'username': {'type': 'string'},
            'password': {'type': 'string', 'secret': True},
            'system_id': {'type': 'string', 'minLength': 1},
            'verify': {'type': ['boolean', 'string'], 'path': True},
            'force_off_fallback': {'type': 'boolean'},
        },
    }

    @classmethod
    def check(cls, mode, options):
        super().check(mode, options)
        if urllib.parse.urlsplit(options['url']).password is not None:
            raise exception.PowerError('redfish url must not contain credentials; '
                                       'use the username and password options')

    def _system(self, target):
        defaults = self.conf.drs_power
        options = target.options
        verify = options.get('verify')
        if verify is None:
            verify = defaults.redfish_verify
        elif not paths.is_switch(verify):
            verify = paths.checked_path(self.conf, verify, 'verify', target.name)
        # Basic auth, chosen explicitly: sushy's default tries a Redfish
        # session first and logs an ERROR from every BMC without a
        # SessionService before falling back; and one connection serves one
        # operation here, so a session would only add a POST (and leave a
        # session behind on the BMC) per call.
        connection = sushy.Sushy(
            options['url'], auth=sushy.auth.BasicAuth(username=options.get('username'),
                                                      password=options.get('password')),
            **_transport(options['url'], parse_verify(verify), defaults.timeout,
                         defaults.redfish_retries))
        system_id = options.get('system_id')
        if system_id and not system_id.startswith('/'):
            system_id = '/redfish/v1/Systems/%s' % system_id
        return connection.get_system(system_id)

    @staticmethod
    def _advertised(system):
        """Reset types the BMC lists; None when it does not say."""
        action = (system.json.get('Actions') or {}).get(_RESET_ACTION) or {}
        values = action.get(_ALLOWED)
        return None if values is None else set(values)

    def _suspend(self, target):
        system = self._system(target)
        advertised = self._advertised(system)
        if target.mode == base.MODE_S3:
            if advertised is None or 'Suspend' not in advertised:
                raise exception.PowerError('the BMC does not offer Suspend; set power mode off')
            system.reset_system(sushy.ResetType.SUSPEND)
            return
        if system.power_state == sushy.PowerState.OFF:
            return
        force_off = bool(target.options.get('force_off_fallback'))
        if advertised is None or 'GracefulShutdown' in advertised:
            try:
                system.reset_system(sushy.ResetType.GRACEFUL_SHUTDOWN)
                return
            except sushy.exceptions.SushyError:
                if not force_off:
                    raise
        elif not force_off:
            raise exception.PowerError('the BMC does not offer GracefulShutdown and '
                                       'force_off_fallback is not set')
        system.reset_system(sushy.ResetType.FORCE_OFF)

    def _wake(self, target):
        system = self._system(target)
        advertised = self._advertised(system) or set()
        if system.power_state == sushy.PowerState.PAUSED and 'Resume' in advertised:
            system.reset_system(sushy.ResetType.RESUME)
        elif system.power_state != sushy.PowerState.ON:
            system.reset_system(sushy.ResetType.ON)

    def _status(self, target):
        return _STATUS.get(self._system(target).power_state, base.UNKNOWN)

    def _power_watts(self, target):
        for chassis in self._system(target).chassis:
            try:
                controls = chassis.power.json.get('PowerControl') or ()
            except sushy.exceptions.MissingAttributeError:
                continue  # this chassis has no Power resource
            for control in controls:
                watts = control.get('PowerConsumedWatts')
                if watts is not None:
                    return watts
        return None
