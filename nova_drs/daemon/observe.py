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

"""Observe: every read of a cycle, returned as a ``Raw``.

Sources: nova's REST API (services, hypervisors, servers, aggregates, server
groups, migrations), placement (inventories: capacity and allocation
ratios), the DRS database (host power state, rules, requested migrations)
and the statistics store (utilisation history, ``stats_history``).

Observing is split in two: ``Observer.fetch`` does every read (I/O) and
returns a ``Raw``; ``cloud_view.build_view`` turns a Raw into the View the
planner and the act step use, with no I/O at all. The nova side (``Inventory``) is kept
between cycles and refreshed incrementally: servers by nova's
``changes-since``, placement inventories only for providers whose
generation moved. Every ``full_refresh_cycles`` cycles, and whenever the
incremental path sees something odd, everything is re-listed.
"""

import dataclasses
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs import exception
from nova_drs.clients import nova_api
from nova_drs.daemon import cloud_view
from nova_drs.daemon import stats_history
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations

LOG = logging.getLogger(__name__)

GONE_STATUSES = frozenset(('DELETED', 'SOFT_DELETED'))
#: changes-since starts this much before the newest change already seen, so a
#: change committed late with an older timestamp is still picked up.
CHANGES_SINCE_OVERLAP = datetime.timedelta(seconds=60)


@dataclasses.dataclass
class Raw:
    """Everything one cycle read, as the sources returned it."""

    services: dict          # host -> nova service
    hypervisors: list
    aggregates: list
    servers: dict           # uuid -> nova server
    groups: list
    migrations: list        # nova migration records in an in-flight status
    inventories: dict       # provider uuid -> placement inventories body
    records: dict           # host -> DRS host record
    requests: list          # open lb_migrations requests
    host_samples: dict      # host -> ((sampled_at, cpu fraction), ...), newest first
    instance_samples: dict  # uuid -> ((sampled_at, cpu fraction), ...), newest first
    cpu_history: dict       # host or uuid -> cpu fractions, oldest first
    suspendable: dict       # host -> bool
    now: datetime.datetime
    #: nova migration records changed within migration_cooldown (any status)
    recent_migrations: list = dataclasses.field(default_factory=list)
    #: the moves the daemon requested within migration_cooldown (lb_migrations)
    recent_requests: list = dataclasses.field(default_factory=list)
    #: host -> seconds since the DRS database received its newest sample
    #: (the database server's clock): what ``stats_max_age`` judges
    stats_age: dict = dataclasses.field(default_factory=dict)
    #: host -> why a fault of its own takes it out of this cycle (HostFault)
    faulty: dict = dataclasses.field(default_factory=dict)
    #: {server: moves} of the servers the oscillation guard holds (moved
    #: max_moves_per_server times within oscillation_window): the planner
    #: leaves them where they are
    held_servers: dict = dataclasses.field(default_factory=dict)
    #: server -> (source, destination) where the plan that started its host's
    #: suspend sends it (evacuation.Targets): the view counts it there already
    evacuation_targets: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class HostFault:
    """Why one host sits out one cycle: ``kind`` is the metric's label."""

    kind: str
    reason: str

    def __str__(self):
        return self.reason


class Inventory:
    """The nova and placement side of the view, kept between cycles."""

    def __init__(self, nova, full_refresh_cycles):
        self.nova = nova
        self.full_refresh_cycles = full_refresh_cycles
        self.servers = None         # uuid -> server, None until the first full list
        self.providers = {}         # rp uuid -> (generation, inventories body)
        self._since = None          # newest server change seen (nova's clock)
        self._cycles = 0            # incremental refreshes since the last full one
        self._hosts = None          # compute service hosts seen last time
        self.last_refresh = None    # 'full' or 'incremental'
        self.faulty = {}            # host -> HostFault of the last refresh

    def invalidate(self):
        """Forget everything: the next refresh re-lists (after a failed cycle)."""
        self.servers = None
        self.providers = {}

    def refresh(self):
        """(services, hypervisors, aggregates, servers, groups, migrations, inventories)."""
        services = {s['host']: s for s in self.nova.compute_services()}
        hypervisors = [h for h in self.nova.hypervisors()
                       if h.get('service', {}).get('host') in services]
        aggregates = self.nova.aggregates()
        groups = self.nova.server_groups()
        migrations = self.nova.migrations_in_status(cloud_view.IN_FLIGHT_NOVA)
        try:
            servers = self.refresh_servers(set(services))
            inventories = self._refresh_inventories(hypervisors)
        except exception.NovaUnavailable:
            self.invalidate()
            raise
        self._hosts = set(services)
        return services, hypervisors, aggregates, servers, groups, migrations, inventories

    def refresh_servers(self, hosts, counts=True):
        """uuid -> server: changes since the last listing, or a full re-list.

        ``counts=False`` (the re-read after the lifecycle steps) neither counts
        toward nor triggers the periodic full re-list, which stays with fetch.
        """
        odd = self._odd(hosts, periodic=counts)
        if odd is None:
            changed = self.nova.servers_changed_since(
                (self._since - CHANGES_SINCE_OVERLAP).isoformat())
            unknown = {s.get('OS-EXT-SRV-ATTR:host') for s in changed} - hosts - {None}
            if not unknown:
                for server in changed:
                    if server.get('status') in GONE_STATUSES:
                        self.servers.pop(server['id'], None)
                    else:
                        self.servers[server['id']] = server
                self._since = _newest(changed, self._since)
                self._cycles += counts
                self.last_refresh = 'incremental'
                return dict(self.servers)
            odd = 'servers changed on unknown hosts %s' % ', '.join(sorted(unknown))
        LOG.info('full re-list of servers: %s', odd)
        self.servers = {s['id']: s for s in self.nova.all_servers()}
        self._since = _newest(self.servers.values(), None)
        self._cycles = 0
        self.last_refresh = 'full'
        return dict(self.servers)

    def _odd(self, hosts, periodic=True):
        """Why the incremental path cannot be trusted this cycle, or None."""
        if self.servers is None:
            return 'no previous listing'
        if self._since is None:
            return 'no change timestamp yet'
        if periodic and self._cycles + 1 >= self.full_refresh_cycles:
            return 'every %d cycles' % self.full_refresh_cycles
        if hosts != self._hosts:
            return 'compute hosts changed'
        return None

    def _refresh_inventories(self, hypervisors):
        """Inventories of every compute node placement can describe.

        A compute node placement lists no provider for, or whose inventories
        placement answers with an error, is its host's fault: the host sits
        out the cycle (``self.faulty``), every other one is read as usual.
        Only the provider listing itself failing stops the cycle.
        """
        generations = self.nova.resource_providers()
        host_of = {h['id']: h['service']['host'] for h in hypervisors}
        self.faulty = {}
        for uuid in sorted(set(host_of) - set(generations)):
            self._fault(host_of[uuid], 'no_resource_provider',
                        'placement lists no resource provider for its compute node %s' % uuid)
        wanted = set(host_of) & set(generations)
        stale = [uuid for uuid in sorted(wanted)
                 if self.providers.get(uuid, (None,))[0] != generations[uuid]]
        fresh = self.nova.concurrently(self._inventory_or_fault, stale)
        for uuid, body in fresh.items():
            if isinstance(body, Exception):
                wanted.discard(uuid)
                self._fault(host_of[uuid], 'inventory_unreadable',
                            'placement did not return the inventories of %s: %s'
                            % (uuid, body))
                continue
            self.providers[uuid] = (body.get('resource_provider_generation',
                                             generations[uuid]), body)
        self.providers = {uuid: self.providers[uuid] for uuid in wanted}
        self._log_faults()
        return {uuid: body for uuid, (_gen, body) in self.providers.items()}

    def _inventory_or_fault(self, provider_uuid):
        """One provider's inventories, or the error placement answered for it.

        No answer at all (placement down or hung) is raised: that is not one
        host's fault.
        """
        try:
            return self.nova.provider_inventory_body(provider_uuid)
        except exception.NovaRequestFailed as exc:
            return exc
        except exception.NovaUnavailable as exc:
            if exc.status is None:
                raise
            return exc

    def _fault(self, host, kind, reason):
        self.faulty[host] = HostFault(kind, reason)

    def _log_faults(self, shown=10):
        """One line per cycle, whatever the number of faulty hosts (placement
        answering an empty list would otherwise log one line per compute)."""
        if not self.faulty:
            return
        named = sorted(self.faulty)[:shown]
        LOG.warning('%d host(s) left out of this cycle: %s%s', len(self.faulty),
                    '; '.join('%s: %s' % (host, self.faulty[host]) for host in named),
                    ' ...' if len(self.faulty) > shown else '')


def _newest(servers, since):
    for server in servers:
        stamp = server.get('updated')
        if stamp:
            when = nova_api.parse_time(stamp)
            since = when if since is None or when > since else since
    return since


class Observer:

    def __init__(self, nova, database, power_drivers, history_length, stats_max_age,
                 host_cooldown, full_refresh_cycles=1, stats_window=None,
                 clock=timeutils.utcnow, migration_cooldown=0, oscillation=(0, 0)):
        self.nova = nova
        self.db = database
        self.power_drivers = power_drivers
        self.stats_window = datetime.timedelta(seconds=stats_window or stats_max_age)
        self.host_cooldown = datetime.timedelta(seconds=host_cooldown)
        self.migration_cooldown = datetime.timedelta(seconds=migration_cooldown)
        #: (max_moves_per_server, oscillation_window seconds): the guard's limit
        self.oscillation = oscillation
        self.inventory = Inventory(nova, full_refresh_cycles)
        self.history = stats_history.History(history_length)
        self._now = clock

    def fetch(self, register_hosts=True):
        """A Raw; raises exception.NovaUnavailable when a listing cannot be read
        whole. What placement cannot tell about one host is in ``Raw.faulty``.

        ``register_hosts=False`` (dry run) keeps unknown hosts in memory
        instead of inserting their DRS records.
        """
        (services, hypervisors, aggregates, servers, groups, migrations,
         inventories) = self.inventory.refresh()
        now = self._now()
        records = self._records(services, register_hosts)
        if self.inventory.last_refresh == 'full':
            self.history.clear(self.stats_window)
        stats_history.read_statistics(self.db, self.history)
        return Raw(
            services=services, hypervisors=hypervisors, aggregates=aggregates,
            servers=servers, groups=groups, migrations=migrations, inventories=inventories,
            records=records, requests=lb_migrations.open_requests(self.db),
            host_samples=self.history.hosts, instance_samples=self.history.instances,
            cpu_history=self.history.cpu, stats_age=self.history.ages(),
            suspendable=self._suspendable_hosts(records, now), now=now,
            recent_migrations=self._recent_migrations(now),
            recent_requests=self._recent_requests(now),
            held_servers=self._held_servers(now),
            faulty=dict(self.inventory.faulty))

    def _recent_migrations(self, now):
        """nova's migration records changed within the cooldown: one paged listing,
        whatever the number of hosts or servers."""
        if not self.migration_cooldown:
            return []
        since = now - self.migration_cooldown
        return self.nova.migrations(**{'changes-since': since.isoformat()})

    def _recent_requests(self, now):
        """The moves this daemon (or the one before it) asked nova for within the
        cooldown, failed ones marked: one indexed query."""
        if not self.migration_cooldown:
            return []
        return lb_migrations.requested_since(self.db, now - self.migration_cooldown)

    def _held_servers(self, now):
        """Servers at the oscillation guard's limit: the guard would refuse
        their moves, so the planner must not count on them (a host holding one
        cannot be emptied). One grouped query."""
        max_moves, window = self.oscillation
        if window <= 0:
            return {}
        return lb_migrations.moved_at_least(
            self.db, now - datetime.timedelta(seconds=window), max_moves)

    def reread_after_act(self, raw):
        """The same Raw with what the lifecycle steps changed: DRS records, services,
        servers (changes-since) and open requests; cheap, no re-list."""
        raw.services = {s['host']: s for s in self.nova.compute_services()}
        if self.inventory.servers is not None:
            raw.servers = self.inventory.refresh_servers(set(raw.services), counts=False)
        raw.records = self._records(raw.services, register=False)
        raw.requests = lb_migrations.open_requests(self.db)
        raw.suspendable = self._suspendable_hosts(raw.records, raw.now)
        return raw

    def _records(self, services, register):
        records = {r['host']: r for r in drs_hosts.list_with_power(self.db)}
        unknown = sorted(set(services) - set(records))
        if unknown and register:
            drs_hosts.ensure_many(self.db, unknown)
            records = {r['host']: r for r in drs_hosts.list_with_power(self.db)}
        for host in unknown:
            records.setdefault(host, drs_hosts.new_record(host))
        return records

    def _suspendable_hosts(self, records, now):
        return {host: self._suspendable(record, now) for host, record in records.items()}

    def _suspendable(self, record, now):
        """Only hosts we can power off *and* wake again, and not just woken."""
        if record['wake_failed']:
            return False
        changed = record['state_changed_at']
        if changed and now - changed < self.host_cooldown:
            return False
        try:
            driver, target = self.power_drivers(record)
            return driver.can_suspend(target.options) and driver.can_wake(target.options)
        except Exception:
            return False
