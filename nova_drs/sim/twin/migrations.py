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

"""The twin's live migrations: where nova's scheduler would send a server
without a named host, and how long the pre-copy takes (virtual time).

``Migrations`` is a mixin of ``cloud.Cloud``: it reads the cloud's hosts,
servers, placement and demand, and schedules phases on its event queue.
"""

import collections
import datetime
import math
import uuid as uuid_mod

from oslo_utils import timeutils

#: nova's live_migration_completion_timeout: seconds per GiB of RAM before
#: libvirt gives up on a pre-copy that does not converge.
COMPLETION_TIMEOUT_PER_GIB = 800
#: Seconds a live migration spends in ``preparing`` (pre-checks, target setup).
PREPARE_SECONDS = 5.0
#: When a stalled live migration would end on its own: never, within a run.
STALLED = datetime.timedelta(days=3650)

def stamp(when):
    return when.strftime('%Y-%m-%dT%H:%M:%SZ')


def precopy_seconds(ram_mb, dirty_mb_s, bandwidth_mb_s):
    """Seconds of an iterative pre-copy live migration, or None if it cannot converge.

    Clark et al., "Live Migration of Virtual Machines", NSDI 2005, and Akoush
    et al., "Predicting the Performance of Virtual Machine Migration", MASCOTS
    2010: round i copies what the guest dirtied during round i-1, so the
    rounds form a geometric series of ratio D/B whose sum is at most
    M / (B - D) (M: RAM, B: bandwidth, D: dirty rate). When D >= B the
    pre-copy never converges and libvirt aborts it after nova's
    ``live_migration_completion_timeout`` (800 s per GiB).
    """
    if dirty_mb_s >= bandwidth_mb_s:
        return None
    return ram_mb / (bandwidth_mb_s - dirty_mb_s)


class Migrations:
    """Live migrations of ``cloud.Cloud``: choose, start, advance, finish."""

    #: nova-drs's MigrationLimitFilter in the documented scheduler config:
    #: ``[loadbalancer] max_migrations_per_destination`` (None: no limit).
    max_arrivals = None

    def arriving(self):
        """host -> migrations in progress arriving on it."""
        return collections.Counter(
            server['_migration']['dest_compute'] for server in self.servers.values()
            if server.get('_migration') is not None)

    def _accepts(self, host, server, source, arriving):
        """nova's scheduler checks for a host, named (without force, as the
        daemon asks) or not: up and enabled (ComputeFilter), not the source,
        fewer than ``max_arrivals`` migrations arriving (MigrationLimitFilter),
        the server's CPU demand fits (nova-drs's CPU filter)."""
        return (host.up and host.enabled and host.name != source
                and (self.max_arrivals is None or arriving[host.name] < self.max_arrivals)
                and self.load(host.name) + self.demand(self.vm_of[server['id']])
                <= host.capacity)

    def load(self, host_name):
        """MIPS demanded on a host now (servers migrating in counted there too)."""
        return sum(self.demand(self.vm_of[uuid]) for uuid in self.placed().get(host_name, ()))

    def choose_host(self, server, source):
        """nova's scheduler for a move without a host: the checks of
        ``_accepts`` (the CPU demand fits among them), then nova-drs's weighers: fewest
        migrations in progress (MigrationWeigher), then the fullest host
        (power saving: emptied hosts stay empty); the name breaks ties."""
        moving = collections.Counter()
        for other in self.servers.values():
            migration = other.get('_migration')
            if migration is not None:
                moving.update((migration['source_compute'], migration['dest_compute']))
        arriving = self.arriving()
        best = None
        for host in self.hosts.values():
            if not self._accepts(host, server, source, arriving):
                continue
            load = self.load(host.name)
            if load == 0:
                continue            # an empty host is kept empty (power saving)
            key = (moving[host.name], -load / host.capacity, host.name)
            if best is None or key < best[0]:
                best = (key, host.name)
        return best and best[1]

    def _start_migration(self, server, source, destination):
        now = timeutils.utcnow()
        migration = {
            'id': next(self._migration_ids), 'uuid': str(uuid_mod.UUID(
                int=self.rng.getrandbits(128))),
            'instance_uuid': server['id'], 'source_compute': source,
            'dest_compute': destination, 'source_node': source, 'dest_node': destination,
            'status': 'queued', 'migration_type': 'live-migration',
            'created_at': stamp(now), 'updated_at': stamp(now),
            'project_id': 'twin', 'user_id': 'twin', '_seconds': 0}
        self.migrations.append(migration)
        server['_migration'] = migration
        server['status'] = 'MIGRATING'
        server['OS-EXT-STS:task_state'] = 'migrating'
        server['updated'] = stamp(now)
        self._bump(destination)
        queue = self.hosts[source].live_queue
        queue.append((server, migration))
        if len(queue) == 1:
            self._begin(server, migration)

    def _begin(self, server, migration):
        """The source's slot is free: pre-checks, then the pre-copy. nova-compute
        runs ``max_concurrent_live_migrations`` (1 by default) at a time; the
        others wait ``queued`` and the next starts when one ends, whether it
        completed, failed or was aborted (a stalled one holds the slot until then)."""
        v = self.vm_of[server['id']]
        ram = server['flavor']['ram']
        utilisation = min(1.0, self.demand(v) / server['flavor']['vcpus'])
        seconds = precopy_seconds(ram, self.dirty_at_full * utilisation, self.bandwidth)
        limit = COMPLETION_TIMEOUT_PER_GIB * max(ram / 1024.0, 1.0)
        fails = seconds is None or seconds > limit or self.faults.migration_fails(server)
        stalls = not fails and self.faults.migration_stalls(server)
        if seconds is None or seconds > limit:
            seconds = limit
        elif fails:
            seconds *= self.rng.random()          # fails part-way through
        seconds = math.ceil(seconds)
        running = timeutils.utcnow() + datetime.timedelta(seconds=PREPARE_SECONDS)
        end = running + (STALLED if stalls else datetime.timedelta(seconds=seconds))
        migration['_seconds'] = seconds
        self._phase(migration, 'preparing')
        self.at(running, lambda: self._phase(migration, 'running'))
        if not stalls:
            self.at(end, lambda: self._finish(server, migration,
                                              'error' if fails else 'completed'))

    def _phase(self, migration, status):
        if migration['status'] in ('queued', 'preparing'):
            migration['status'] = status
            migration['updated_at'] = stamp(timeutils.utcnow())

    def _finish(self, server, migration, status):
        if migration['status'] not in ('queued', 'preparing', 'running'):
            return                                     # aborted meanwhile
        now = timeutils.utcnow()
        migration['status'] = status
        migration['updated_at'] = stamp(now)
        server.pop('_migration', None)
        server['status'] = 'ACTIVE'
        server['OS-EXT-STS:task_state'] = None
        server['updated'] = stamp(now)
        if status == 'completed':
            for key in ('OS-EXT-SRV-ATTR:host', 'OS-EXT-SRV-ATTR:hypervisor_hostname'):
                server[key] = migration['dest_compute']
        self._bump(migration['source_compute'])
        self._bump(migration['dest_compute'])
        for observer in self.observers:
            observer('migration', server=server['id'], source=migration['source_compute'],
                     destination=migration['dest_compute'], status=status,
                     seconds=migration['_seconds'])
        self._release(migration)

    def _release(self, migration):
        """``migration`` ended (or its server is gone): the next one queued on
        its source starts."""
        queue = self.hosts[migration['source_compute']].live_queue
        queue[:] = [entry for entry in queue if entry[1] is not migration]
        if queue and queue[0][1]['status'] == 'queued':
            self._begin(*queue[0])
