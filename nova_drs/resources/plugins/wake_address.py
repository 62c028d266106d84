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

"""wake_address: MAC of the interface carrying ``my_ip``, for Wake-on-LAN."""

import nova.conf
from oslo_log import log as logging

from nova_drs.resources import base
from nova_drs.resources import macaddr

LOG = logging.getLogger(__name__)


class WakeAddress(base.ComputeResourcePlugin):
    """Reports ``mac_to_wake`` in the statistics sample.

    The collector stores it in the host's DRS record (``drs_hosts``), which
    the power manager uses to wake the host. A host whose ``my_ip`` is on no
    local interface logs that once and reports nothing.
    """

    def __init__(self, lookup=macaddr.mac_for_ip, conf=nova.conf.CONF):
        self._lookup = lookup
        self._conf = conf
        self._found = None
        self._logged_missing_for = None

    def reset(self, resources, driver):
        ip = self._conf.my_ip
        if self._found and self._found[0] == ip:
            return
        match = self._lookup(ip)
        if match is None:
            self._found = None
            if self._logged_missing_for != ip:
                LOG.error('nova-drs wake_address: no network interface of this host '
                          'has my_ip %s (with a MAC address); the host cannot be '
                          'woken by Wake-on-LAN. Set [DEFAULT] my_ip to the address '
                          'of the management interface.', ip)
                self._logged_missing_for = ip
            return
        interface, mac = match
        LOG.info('nova-drs wake_address: my_ip %s is on %s, MAC %s', ip, interface, mac)
        self._found = (ip, mac)

    def report(self):
        return {'mac_to_wake': self._found[1]} if self._found else {}
