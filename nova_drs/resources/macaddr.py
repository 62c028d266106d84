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

"""The MAC address of the interface carrying an IP address (for Wake-on-LAN)."""

import netifaces


def mac_for_ip(ip, interfaces=netifaces.interfaces, ifaddresses=netifaces.ifaddresses):
    """(interface, MAC) of the interface that has ``ip``, or None.

    ``interfaces``/``ifaddresses`` default to netifaces; tests pass their own.
    Interfaces without a link-layer address (loopback, tunnels) never match.
    """
    for name in interfaces():
        addresses = ifaddresses(name)
        families = (netifaces.AF_INET, netifaces.AF_INET6)
        ips = {entry.get('addr', '').split('%')[0]
               for family in families for entry in addresses.get(family, [])}
        if ip not in ips:
            continue
        links = [entry.get('addr') for entry in addresses.get(netifaces.AF_LINK, [])]
        links = [mac.lower() for mac in links if mac and mac != '00:00:00:00:00:00']
        if links:
            return name, links[0]
    return None
