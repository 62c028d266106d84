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

"""Observe: one consistent view of the cloud, turned into a core Snapshot.

Sources: nova's REST API (services, hypervisors, servers, aggregates, server
groups, migrations), placement (inventories: capacity and allocation
ratios), the DRS database (host power state, rules, requested migrations)
and the statistics store (utilisation history). Capacity is counted in
vCPUs: a host's ``mips`` is its physical vCPU count and an instance's is its
flavor's vCPUs, so utilisation fractions mean the same in the simulator.

Observing is split in two: ``Observer.fetch`` does every read (I/O) and
returns a ``Raw``; ``build_view`` turns a Raw into the View the planner and
the act step use, with no I/O at all. The nova side (``Inventory``) is kept
between cycles and refreshed incrementally: servers by nova's
``changes-since``, placement inventories only for providers whose
generation moved. Every ``full_refresh_cycles`` cycles, and whenever the
incremental path sees something odd, everything is re-listed.
"""

import dataclasses
import datetime
import logging
import re

from oslo_utils import timeutils
from nova_drs import cluster_policy
from nova_drs import opt_out
from nova_drs.daemon import nova_api
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.db import statistics as db_statistics
from nova_drs.loadbalancer import model

LOG = logging.getLogger(__name__)

#: Every non-final migration status nova has: resources held on both ends.
IN_FLIGHT_NOVA = frozenset(('queued', 'preparing', 'running', 'pre-migrating', 'migrating',
                            'post-migrating', 'finished', 'confirming', 'accepted'))
#: A migration in these states left the server where it was: no cooldown.
NOT_MOVED_NOVA = frozenset(('failed', 'error', 'cancelled', 'reverted'))
#: Kinds that move a server (resize and evacuation are not balancing moves).
MOVES_NOVA = frozenset(('live-migration', 'migration'))
STATE_BY_STATUS = {'ACTIVE': 'active', 'PAUSED': 'paused', 'SHUTOFF': 'stopped'}
GONE_STATUSES = frozenset(('DELETED', 'SOFT_DELETED'))
#: changes-since starts this much before the newest change already seen, so a
#: change committed late with an older timestamp is still picked up.
CHANGES_SINCE_OVERLAP = datetime.timedelta(seconds=60)
#: Statistics are re-read from this much before the newest sample already
#: held, for samples stored late; older late ones wait for the full refresh.
STATS_OVERLAP = datetime.timedelta(seconds=30)


@dataclasses.dataclass
class View:
    """What one cycle saw: the snapshot plus what the act step needs."""

    snapshot: model.Snapshot
    services: dict          # host -> nova service dict
    servers: dict           # uuid -> nova server dict
    clusters: dict          # cluster name -> aggregate metadata
    stale_hosts: tuple      # hosts left alone for lack of fresh statistics
    aggregates: list        # nova aggregates (name, id, hosts, metadata)
    hypervisors: list       # nova hypervisors (uuid, hostname, service host)
    inventories: dict = dataclasses.field(default_factory=dict)  # rp uuid -> body
    #: (source, destination or None) of every migration under way, nova's and
    #: ours (evacuations have no destination): what the cycle's limits count.
    in_flight: tuple = ()
    #: uuid -> drs:automation level of every server that opted out.
    opt_out: dict = dataclasses.field(default_factory=dict)


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
        migrations = self.nova.migrations_in_status(IN_FLIGHT_NOVA)
        try:
            servers = self.refresh_servers(set(services))
            inventories = self._refresh_inventories(hypervisors)
        except nova_api.NovaUnavailable:
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
        generations = self.nova.resource_providers()
        wanted = {h['id'] for h in hypervisors}
        missing = wanted - set(generations)
        if missing:
            raise nova_api.IncompleteListing(
                'placement lists no resource provider for compute nodes %s'
                % ', '.join(sorted(missing)))
        stale = [uuid for uuid in sorted(wanted)
                 if self.providers.get(uuid, (None,))[0] != generations[uuid]]
        fresh = self.nova.concurrently(self.nova.provider_inventory_body, stale)
        for uuid, body in fresh.items():
            self.providers[uuid] = (body.get('resource_provider_generation',
                                             generations[uuid]), body)
        self.providers = {uuid: self.providers[uuid] for uuid in wanted}
        return {uuid: body for uuid, (_gen, body) in self.providers.items()}


def _newest(servers, since):
    for server in servers:
        stamp = server.get('updated')
        if stamp:
            when = timeutils.normalize_time(timeutils.parse_isotime(stamp))
            since = when if since is None or when > since else since
    return since


class Observer:

    def __init__(self, nova, database, power_drivers, history_length, stats_max_age,
                 host_cooldown, full_refresh_cycles=1, stats_window=None,
                 clock=timeutils.utcnow, migration_cooldown=0):
        self.nova = nova
        self.db = database
        self.power_drivers = power_drivers
        self.stats_window = datetime.timedelta(seconds=stats_window or stats_max_age)
        self.host_cooldown = datetime.timedelta(seconds=host_cooldown)
        self.migration_cooldown = datetime.timedelta(seconds=migration_cooldown)
        self.inventory = Inventory(nova, full_refresh_cycles)
        self.history = History(history_length)
        self._now = clock

    def fetch(self, register_hosts=True):
        """A Raw; raises nova_api.NovaUnavailable when any source fails.

        ``register_hosts=False`` (dry run) keeps unknown hosts in memory
        instead of inserting their DRS records.
        """
        (services, hypervisors, aggregates, servers, groups, migrations,
         inventories) = self.inventory.refresh()
        now = self._now()
        records = self._records(services, register_hosts)
        if self.inventory.last_refresh == 'full':
            self.history.clear(now - self.stats_window)
        read_statistics(self.db, self.history)
        return Raw(
            services=services, hypervisors=hypervisors, aggregates=aggregates,
            servers=servers, groups=groups, migrations=migrations, inventories=inventories,
            records=records, requests=lb_migrations.open_requests(self.db),
            host_samples=self.history.hosts, instance_samples=self.history.instances,
            cpu_history=self.history.cpu,
            suspendable=self._suspendable_hosts(records, now), now=now,
            recent_migrations=self._recent_migrations(now))

    def _recent_migrations(self, now):
        """nova's migration records changed within the cooldown: one paged listing,
        whatever the number of hosts or servers."""
        if not self.migration_cooldown:
            return []
        since = now - self.migration_cooldown
        return self.nova.migrations(**{'changes-since': since.isoformat()})

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


def read_statistics(database, history):
    """Top ``history`` up with the samples stored since it was last read."""
    host_rows = db_statistics.host_cpu_since(database, history.since())
    after, late = history.unseen(host_rows)
    history.add(host_rows, db_statistics.instance_cpu_since(database, after, late))


class History:
    """The newest ``length`` CPU samples per host and instance, kept between cycles
    and topped up with what is new (cleared and re-read on every full refresh).
    A sample is (sampled_at, CPU demand as a fraction of the capacity).

    Host samples are re-read with an overlap (late ones); instance samples
    only after the newest host sample held, plus those of late host samples.
    """

    def __init__(self, length):
        self.length = length
        self.hosts, self.instances, self.cpu = {}, {}, {}
        self.newest = self.newest_host = None
        self._start = None

    def clear(self, start):
        self.hosts, self.instances, self.cpu = {}, {}, {}
        self.newest = self.newest_host = None
        self._start = start

    @property
    def start(self):
        """Samples taken at or before this were not read (the last full refresh)."""
        return self._start

    def since(self):
        if self.newest is None:
            return self._start
        return max(self._start, self.newest - STATS_OVERLAP)

    def unseen(self, host_rows):
        """(after, late): read instance samples taken after ``after`` and those of
        the ``late`` (host, sampled_at) samples, taken before but not held yet."""
        after = self.newest_host
        if after is None:
            return self.since(), ()
        late = {(host, when) for host, when, _cpu in host_rows if when <= after and
                all(held != when for held, _ in self.hosts.get(host, ()))}
        return after, late

    def add(self, host_rows, instance_rows):
        for rows, held in ((host_rows, self.hosts), (instance_rows, self.instances)):
            changed, newest = set(), None
            for key, sampled_at, cpu in rows:
                samples = held.get(key, ())
                sample = (sampled_at, min(1.0, (cpu or 0.0) / 100.0))
                if not samples or sampled_at > samples[0][0]:
                    held[key] = (sample,) + samples[:self.length - 1]
                elif any(when == sampled_at for when, _ in samples):
                    continue
                else:
                    held[key] = tuple(sorted(samples + (sample,), reverse=True))[
                        :self.length]
                changed.add(key)
                newest = sampled_at if newest is None else max(newest, sampled_at)
            for key in changed:
                self.cpu[key] = tuple(fraction for _when, fraction in reversed(held[key]))
            if newest is not None:
                self.newest = newest if self.newest is None else max(self.newest, newest)
                if held is self.hosts:
                    self.newest_host = max(self.newest_host or newest, newest)


def build_view(raw, rules, stats_max_age):
    """The View of a Raw: pure, no I/O (tested without nova)."""
    max_age = datetime.timedelta(seconds=stats_max_age)
    services, now = raw.services, raw.now
    hypervisors = [h for h in raw.hypervisors if h.get('service', {}).get('host') in services]
    membership = _clusters(raw.aggregates)
    clusters = {a['name']: a.get('metadata') or {} for a in raw.aggregates}
    group_of = {}
    for group in raw.groups:
        policy = group.get('policy') or (group.get('policies') or [None])[0]
        for member in group.get('members', ()):
            group_of[member] = (group['id'], policy if policy in (
                model.AFFINITY, model.ANTI_AFFINITY) else None)

    hosts, stale = [], []
    for hypervisor in hypervisors:
        name = hypervisor['service']['host']
        inventory = raw.inventories.get(hypervisor['id'], {}).get('inventories', {})
        vcpu = inventory.get('VCPU', {})
        ram = inventory.get('MEMORY_MB', {})
        samples = raw.host_samples.get(name, [])
        fresh = bool(samples) and now - samples[0][0] <= max_age
        if not fresh:
            stale.append(name)
        record = raw.records[name]
        service = services[name]
        excluded = (not fresh or service.get('forced_down')
                    or (service['status'] == 'disabled' and not record['disabled_by_drs'])
                    or not rules.allows(name, membership.get(name, ()), hypervisor, service))
        hosts.append(model.Host(
            name=name,
            vcpus=int(vcpu.get('total', 0)) - int(vcpu.get('reserved', 0)),
            ram_mb=int(ram.get('total', 0)) - int(ram.get('reserved', 0)),
            mips=float(max(int(vcpu.get('total', 0)), 1)),
            pe_mips=1.0,
            cluster=_cluster_of(name, membership),
            cpu_allocation_ratio=float(vcpu.get('allocation_ratio', 1.0)),
            ram_allocation_ratio=float(ram.get('allocation_ratio', 1.0)),
            power_state=record['suspend_state'],
            excluded=bool(excluded),
            suspendable=raw.suspendable.get(name, False),
            cpu_history=raw.cpu_history.get(name, ())))

    known_hosts = {h.name for h in hosts}
    moved_at = last_moved(raw.recent_migrations)
    levels = {}
    instances = []
    for uuid, server in raw.servers.items():
        host = server.get('OS-EXT-SRV-ATTR:host')
        if host not in known_hosts:
            continue  # shelved-offloaded, building, or on an unknown host
        flavor = server.get('flavor') or {}
        group, policy = group_of.get(uuid, (None, None))
        level = opt_out.server_level(server)
        if level is not None:
            levels[uuid] = level
        instances.append(model.Instance(
            uuid=uuid, host=host,
            vcpus=int(flavor.get('vcpus', 0)), ram_mb=int(flavor.get('ram', 0)),
            mips=float(flavor.get('vcpus', 0)),
            cpu_history=raw.cpu_history.get(uuid, ()),
            state=STATE_BY_STATUS.get(server['status'], server['status'].lower()),
            server_group=group, group_policy=policy,
            last_migrated_at=moved_at.get(uuid, (None, None))[0],
            left_host=moved_at.get(uuid, (None, None))[1], movable=level is None))

    snapshot = model.Snapshot(
        hosts=tuple(hosts), instances=tuple(instances),
        migrations=tuple(_in_flight(raw, known_hosts)), now=now.timestamp())
    return View(snapshot=snapshot, services=services, servers=raw.servers,
                clusters=clusters, stale_hosts=tuple(stale), aggregates=raw.aggregates,
                hypervisors=hypervisors, inventories=raw.inventories,
                in_flight=under_way(raw), opt_out=levels)


def last_moved(migrations):
    """{uuid: (POSIX time, source host)} of its newest live or cold migration
    that ran or runs: the cooldown, and the host it must not go back to."""
    newest = {}
    for migration in migrations:
        if (migration.get('migration_type') not in MOVES_NOVA
                or migration.get('status') in NOT_MOVED_NOVA):
            continue
        stamp = migration.get('updated_at') or migration.get('created_at')
        if not stamp:
            continue
        when = timeutils.normalize_time(timeutils.parse_isotime(stamp)).timestamp()
        uuid = migration['instance_uuid']
        if uuid not in newest or when > newest[uuid][0]:
            newest[uuid] = (when, migration.get('source_compute'))
    return newest


def cluster_of_hosts(raw):
    """{host: cluster} without building a whole view."""
    membership = _clusters(raw.aggregates)
    return {host: _cluster_of(host, membership) for host in raw.services}


def under_way(raw):
    """(source, destination) per migrating instance, nova's record first."""
    moving = {}
    for migration in raw.migrations:
        if migration.get('status') in IN_FLIGHT_NOVA and migration.get('source_compute'):
            moving[migration['instance_uuid']] = (migration['source_compute'],
                                                  migration.get('dest_compute'))
    for request in raw.requests:
        moving.setdefault(request['instance_uuid'],
                          (request['source'], request['destination']))
    return tuple(moving[uuid] for uuid in sorted(moving))


def _in_flight(raw, known_hosts):
    """Migrations nova runs now (resources held on both ends), and ours it has not
    listed yet."""
    found = {}
    for migration in raw.migrations:
        if migration.get('status') in IN_FLIGHT_NOVA:
            found[migration['instance_uuid']] = migration
    for request in raw.requests:
        server = raw.servers.get(request['instance_uuid'])
        if server and server.get('OS-EXT-STS:task_state') and request['destination']:
            found.setdefault(request['instance_uuid'], {
                'instance_uuid': request['instance_uuid'],
                'source_compute': request['source'],
                'dest_compute': request['destination']})
    result = []
    for uuid, migration in sorted(found.items()):
        source, dest = migration.get('source_compute'), migration.get('dest_compute')
        if uuid in raw.servers and source in known_hosts and dest in known_hosts:
            result.append(model.InFlightMigration(uuid, source, dest))
    return result


def _clusters(aggregates):
    membership = {}
    for aggregate in sorted(aggregates, key=lambda a: a['name']):
        for host in aggregate.get('hosts') or ():
            membership.setdefault(host, []).append(aggregate)
    return membership


def _cluster_of(host, membership):
    return cluster_policy.cluster_name(
        (a['name'], a.get('metadata')) for a in membership.get(host, ()))


class Rules:
    """Allow/deny rules; last match wins, default allow (as the 2015 tool)."""

    TYPES = ('host', 'aggregate', 'availability_zone')

    def __init__(self, rules):
        self._rules = [(r['type'], re.compile(r['value']), r) for r in rules]

    def allows(self, host, aggregates, hypervisor=None, service=None):
        rule = self.deciding(host, aggregates, service=service)
        return True if rule is None else bool(rule['allow'])

    def deciding(self, host, aggregates, service=None):
        """The rule (dict as given) that decides for the host: the last match."""
        decided = None
        zone = (service or {}).get('zone')
        for kind, pattern, rule in self._rules:
            if kind == 'host':
                names = (host,)
            elif kind == 'aggregate':
                names = tuple(a['name'] for a in aggregates)
            else:
                names = (zone,) if zone else ()
            if any(pattern.fullmatch(name) for name in names):
                decided = rule
        return decided
