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

"""Wake-on-LAN power driver: wakes a host with a magic packet to its MAC."""

import re

import wakeonlan

from nova_drs import exception
from nova_drs.power import base
from nova_drs.power import loader

_MAC = re.compile(r'^[0-9a-fA-F]{2}([:-]?)(?:[0-9a-fA-F]{2}\1){4}[0-9a-fA-F]{2}$')


def normalise_mac(mac, host):
    """``mac`` as ``aa:bb:cc:dd:ee:ff``; PowerError if it is not a MAC."""
    if not isinstance(mac, str) or not _MAC.match(mac.strip()):
        raise exception.PowerError('host %s has no valid MAC address to wake (mac_to_wake=%r)'
                                   % (host, mac))
    digits = re.sub('[^0-9a-fA-F]', '', mac).lower()
    return ':'.join(digits[i:i + 2] for i in range(0, 12, 2))


class WakeOnLanDriver(base.PowerDriver):
    """Wakes the host by sending 6 x 0xFF + 16 x its MAC over UDP.

    The packet goes to ``broadcast`` (default ``[drs_power]
    wol_broadcast_address``) on ``port`` (default ``[drs_power] wol_port``),
    optionally from local address ``interface``; the MAC is the host's
    ``mac_to_wake``. A magic packet cannot suspend anything and nothing
    answers it, so: suspend is delegated to the driver named in
    ``suspend_via`` (ssh, ipmi or redfish) with ``suspend_options`` as its
    options, and status comes from that driver too. Without ``suspend_via``
    the host is wake-only (``can_suspend`` is False, suspend fails) and its
    status is 'unknown'.
    """

    NAME = 'wol'
    MODES = base.MODES
    OPTIONS = {
        'type': 'object',
        'additionalProperties': False,
        'properties': {
            'broadcast': {'type': 'string', 'minLength': 1,
                          'description': 'address the magic packet is sent to'},
            'port': {'type': 'integer', 'minimum': 1, 'maximum': 65535,
                     'description': 'UDP port of the magic packet'},
            'interface': {'type': 'string', 'minLength': 1,
                          'description': 'local address to send the packet from'},
            'suspend_via': {'type': 'string', 'minLength': 1,
                            'description': 'driver that suspends the host'},
            'suspend_options': {'type': 'object',
                                'description': 'options of the suspend_via driver'},
        },
    }

    @classmethod
    def _suspend_driver_class(cls, options):
        name = options.get('suspend_via')
        if name is None:
            return None
        if name == cls.NAME:
            raise exception.PowerError('suspend_via cannot be wol: a magic packet cannot suspend')
        return loader.driver_class(name)

    @classmethod
    def check(cls, mode, options):
        super().check(mode, options)
        suspend_class = cls._suspend_driver_class(options)
        if suspend_class is not None:
            suspend_class.check(mode, options.get('suspend_options') or {})

    @classmethod
    def schema_for(cls, options):
        """``OPTIONS`` with ``suspend_options`` described by the suspend_via driver's
        schema, so its secrets are redacted and sealed like that driver's own."""
        try:
            suspend_class = (cls._suspend_driver_class(options)
                             if isinstance(options, dict) else None)
        except exception.PowerError:
            suspend_class = None
        if suspend_class is None:
            return cls.OPTIONS
        properties = dict(cls.OPTIONS['properties'],
                          suspend_options=suspend_class.schema_for(
                              options.get('suspend_options') or {}))
        return dict(cls.OPTIONS, properties=properties)

    @classmethod
    def can_suspend(cls, options):
        return bool(options.get('suspend_via'))

    def _suspend_target(self, target):
        suspend_class = self._suspend_driver_class(target.options)
        if suspend_class is None:
            return None, None
        inner = base.PowerTarget(name=target.name, mac=target.mac, mode=target.mode,
                                 options=target.options.get('suspend_options') or {})
        return suspend_class(self.conf), inner

    def _suspend(self, target):
        driver, inner = self._suspend_target(target)
        if driver is None:
            raise exception.PowerError('wol can only wake; set suspend_via (ssh, ipmi or '
                                       'redfish) to suspend this host')
        driver.suspend(inner)

    def _wake(self, target):
        mac = normalise_mac(target.mac, target.name)
        defaults = self.conf.drs_power
        wakeonlan.wake(mac,
                       host=self.option(target, 'broadcast', defaults.wol_broadcast_address),
                       port=self.option(target, 'port', defaults.wol_port),
                       interface=self.option(target, 'interface'))

    def _status(self, target):
        driver, inner = self._suspend_target(target)
        return base.UNKNOWN if driver is None else driver.status(inner)
