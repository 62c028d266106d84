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
