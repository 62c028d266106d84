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

"""The daemon's bridge to the power drivers: a host record -> (driver, target)."""

from nova_drs import exception
from nova_drs.db import hosts as drs_hosts
from nova_drs.power import base
from nova_drs.power import loader
from nova_drs.power import sealing


def drivers_for(conf, database):
    """Callable the host lifecycle uses: record -> (driver, PowerTarget).

    Raises PowerError when the host has no usable driver, so the lifecycle
    refuses to empty a host it could not power off or wake again. Sealed
    secrets are opened here, with ``[drs_power] unseal_private_key_files``,
    and only here: the clear options live in the target handed to the driver.
    """
    # driver name -> its driver, or the PowerError loading it raised. The
    # outcome depends only on the name and the installed packages (a driver
    # installed later needs a restart, as one loaded already does), so a
    # failure is kept too: a host with no driver set (or an unknown one) must
    # not rescan every installed package's entry points each time the cycle
    # asks whether it is suspendable -- twice a cycle for every such host
    # (9 ms each here: three minutes a cycle at 10,000 hosts).
    cache = {}
    unsealer = sealing.unsealer_from_conf(conf)

    def lookup(record):
        # Records from hosts.list_with_power carry their settings: no query.
        name, mode, options, mac = record.get('power_settings') or drs_hosts.power_settings(
            database, record['host'])
        if name not in cache:
            try:
                cache[name] = loader.get_driver(name, conf)
            except exception.PowerError as exc:
                cache[name] = exc
        driver = cache[name]
        if isinstance(driver, exception.PowerError):
            raise exception.PowerError(str(driver))
        options = sealing.unseal_options(options, record['host'], unsealer)
        return driver, base.PowerTarget(name=record['host'], mac=mac, options=options,
                                        mode=mode or base.MODE_OFF)
    return lookup


def check_keys(conf, database):
    """ConfigError (one line) unless the daemon can open every stored sealed secret.

    Run before the first cycle: a daemon that cannot open a host's password
    would empty the host and then fail to power it off, or never wake it.
    """
    try:
        unsealer = sealing.unsealer_from_conf(conf)
    except exception.SealError as exc:
        raise exception.ConfigError(str(exc)) from None
    missing, hosts, after = set(), [], None
    while True:
        rows = drs_hosts.stored_power_options(database, after=after)
        if not rows:
            break
        for host, _, text in rows:
            try:
                needed = sealing.sealed_key_ids(base.parse_options(text, host))
            except exception.PowerError:
                continue  # the lifecycle reports unreadable options for that host
            if needed - set(unsealer.keys):
                missing |= needed - set(unsealer.keys)
                hosts.append(host)
        after = rows[-1][0]
    if missing:
        raise exception.ConfigError(
            'power secrets of %d host(s) (first: %s) are sealed for key(s) %s, not among '
            '[drs_power] unseal_private_key_files; give this daemon that private key'
            % (len(hosts), hosts[0], ', '.join(sorted(missing))))
