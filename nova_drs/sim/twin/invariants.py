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

"""The closed loop's invariants, checked after every cycle: what the daemon
must never do to a cloud, whatever the faults (doc/source/twin.md lists them).
"""

import collections
import datetime

from nova_drs.db import hosts as drs_hosts


def check(loop, database):
    """After a cycle: what must always hold, counted in ``loop.violations`` per
    kind when it does not (the twin's ``cloud``, ``power`` and ``retired``)."""
    cloud, conf, violations = loop.cloud, loop.conf.loadbalancer, loop.violations
    for server in cloud.servers.values():
        if server['status'] == 'ERROR':
            violations['server_in_error'] += 1
    records = {r['host']: r for r in drs_hosts.list_all(database)}
    for name, host in cloud.hosts.items():
        record = records.get(name) or {}
        state = record.get('suspend_state', drs_hosts.ACTIVE)
        if not host.powered:
            if any(s['OS-EXT-SRV-ATTR:host'] == name for s in cloud.servers.values()):
                violations['servers_on_sleeping_host'] += 1
            if cloud.usages(name):
                violations['allocations_on_sleeping_host'] += 1
            if state == drs_hosts.ACTIVE:
                violations['drs_active_but_host_off'] += 1
        elif state == drs_hosts.SUSPENDED:
            violations['drs_suspended_but_host_on'] += 1
        if state == drs_hosts.ACTIVE and not record.get('disabled_by_drs') \
                and not host.enabled:
            violations['service_left_disabled'] += 1
    per_source, per_destination, total = (collections.Counter(),
                                          collections.Counter(), 0)
    for server in cloud.servers.values():
        migration = server.get('_migration')
        if migration is not None:
            per_source[migration['source_compute']] += 1
            per_destination[migration['dest_compute']] += 1
            total += 1
    if any(n > conf.max_migrations_per_host for n in per_source.values()):
        violations['migrations_per_host_limit'] += 1
    if any(n > conf.max_migrations_per_destination for n in per_destination.values()):
        violations['migrations_per_destination_limit'] += 1
    if total > conf.max_migrations_per_cluster:
        violations['migrations_per_cluster_limit'] += 1
    cooldown = datetime.timedelta(seconds=conf.host_cooldown)
    for host, when in loop.power.suspend_commands:
        woken = loop.power.woken_at.get(host)
        if woken is not None and when > woken and when - woken < cooldown:
            violations['suspended_within_host_cooldown'] += 1
    loop.power.suspend_commands.clear()
    lost = set(cloud.vm_of) - set(cloud.servers) - loop.retired
    if lost:
        violations['server_lost'] += len(lost)
