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

from nova_drs.db import hosts as drs_hosts
from nova_drs.power import base
from nova_drs.power import loader


def drivers_for(conf, database):
    """Callable the host lifecycle uses: record -> (driver, PowerTarget).

    Raises PowerError when the host has no usable driver, so the lifecycle
    refuses to empty a host it could not power off or wake again.
    """
    cache = {}

    def lookup(record):
        # Records from hosts.list_with_power carry their settings: no query.
        name, mode, options, mac = record.get('power_settings') or drs_hosts.power_settings(
            database, record['host'])
        if name not in cache:
            cache[name] = loader.get_driver(name, conf)
        return cache[name], base.PowerTarget(name=record['host'], mac=mac, options=options,
                                             mode=mode or base.MODE_OFF)
    return lookup
