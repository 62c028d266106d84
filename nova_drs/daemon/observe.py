"""Observe: one consistent view of the cloud, turned into a core Snapshot.

Sources: nova's REST API (services, hypervisors, servers, aggregates, server
groups, migrations), placement (inventories: capacity and allocation
ratios), the DRS database (host power state, rules, requested migrations)
and the statistics store (utilisation history). Capacity is counted in
vCPUs: a host's ``mips`` is its physical vCPU count and an instance's is its
flavor's vCPUs, so utilisation fractions mean the same in the simulator.
"""

import dataclasses
import datetime
import logging
import re

from oslo_utils import timeutils
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.loadbalancer import model
from nova_drs.stats import store

LOG = logging.getLogger(__name__)

IN_FLIGHT_NOVA = frozenset(('queued', 'preparing', 'running', 'pre-migrating', 'migrating',
                            'post-migrating', 'finished', 'confirming', 'accepted'))
STATE_BY_STATUS = {'ACTIVE': 'active', 'PAUSED': 'paused', 'SHUTOFF': 'stopped'}


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



class Observer:

    def __init__(self, nova, database, rules, power_drivers, history_length, stats_max_age,
                 host_cooldown, clock=timeutils.utcnow):
        self.nova = nova
        self.db = database
        self.rules = rules
        self.power_drivers = power_drivers
        self.history_length = history_length
        self.stats_max_age = datetime.timedelta(seconds=stats_max_age)
        self.host_cooldown = datetime.timedelta(seconds=host_cooldown)
        self._now = clock

    def observe(self):
        """A View; raises nova_api.NovaUnavailable when any source fails."""
        services = {s['host']: s for s in self.nova.compute_services()}
        hypervisors = [h for h in self.nova.hypervisors()
                       if h.get('service', {}).get('host') in services]
        aggregates = self.nova.aggregates()
        servers = {s['id']: s for s in self.nova.all_servers()}
        groups = self.nova.server_groups()
        for host in services:
            drs_hosts.ensure(self.db, host)
        records = {r['host']: r for r in drs_hosts.list_all(self.db)}
        now = self._now()
        host_samples = store.latest_hosts(self.db, list(services), self.history_length)
        instance_samples = store.latest_instances(self.db, list(servers), self.history_length)

        membership = self._clusters(aggregates)
        clusters = {name: meta for name, meta in
                    ((a['name'], a.get('metadata') or {}) for a in aggregates)}
        group_of = {}
        for group in groups:
            policy = group.get('policy') or (group.get('policies') or [None])[0]
            for member in group.get('members', ()):
                group_of[member] = (group['id'], policy if policy in (
                    model.AFFINITY, model.ANTI_AFFINITY) else None)

        hosts, stale = [], []
        for hypervisor in hypervisors:
            name = hypervisor['service']['host']
            inventory = self.nova.placement(
                'GET', '/resource_providers/%s/inventories' % hypervisor['id'])['inventories']
            vcpu = inventory.get('VCPU', {})
            ram = inventory.get('MEMORY_MB', {})
            samples = host_samples.get(name, [])
            fresh = bool(samples) and now - samples[0]['sampled_at'] <= self.stats_max_age
            if not fresh:
                stale.append(name)
            record = records.get(name)
            service = services[name]
            excluded = (not fresh or service.get('forced_down')
                        or (service['status'] == 'disabled' and not record['disabled_by_drs'])
                        or not self.rules.allows(name, membership.get(name, ()),
                                                 hypervisor, service))
            hosts.append(model.Host(
                name=name,
                vcpus=int(vcpu.get('total', 0)) - int(vcpu.get('reserved', 0)),
                ram_mb=int(ram.get('total', 0)) - int(ram.get('reserved', 0)),
                mips=float(max(int(vcpu.get('total', 0)), 1)),
                pe_mips=1.0,
                cluster=self._cluster_of(name, membership),
                cpu_allocation_ratio=float(vcpu.get('allocation_ratio', 1.0)),
                ram_allocation_ratio=float(ram.get('allocation_ratio', 1.0)),
                power_state=record['suspend_state'],
                excluded=bool(excluded),
                suspendable=self._suspendable(record, now),
                cpu_history=tuple(min(1.0, (s['cpu_used_percent'] or 0.0) / 100.0)
                                  for s in reversed(samples))))

        known_hosts = {h.name for h in hosts}
        instances = []
        for uuid, server in servers.items():
            host = server.get('OS-EXT-SRV-ATTR:host')
            if host not in known_hosts:
                continue  # shelved-offloaded, building, or on an unknown host
            flavor = server.get('flavor') or {}
            samples = instance_samples.get(uuid, [])
            group, policy = group_of.get(uuid, (None, None))
            instances.append(model.Instance(
                uuid=uuid, host=host,
                vcpus=int(flavor.get('vcpus', 0)), ram_mb=int(flavor.get('ram', 0)),
                mips=float(flavor.get('vcpus', 0)),
                cpu_history=tuple(min(1.0, (s['cpu_used_percent'] or 0.0) / 100.0)
                                  for s in reversed(samples)),
                state=STATE_BY_STATUS.get(server['status'], server['status'].lower()),
                server_group=group, group_policy=policy))

        migrations = self._in_flight(servers, known_hosts)
        snapshot = model.Snapshot(hosts=tuple(hosts), instances=tuple(instances),
                                  migrations=tuple(migrations),
                                  now=now.timestamp())
        return View(snapshot=snapshot, services=services, servers=servers,
                    clusters=clusters, stale_hosts=tuple(stale), aggregates=aggregates,
                    hypervisors=hypervisors)

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

    def _in_flight(self, servers, known_hosts):
        """Migrations nova runs now (resources held on both ends)."""
        found = {}
        for migration in self.nova.migrations(status='running'):
            found[migration['instance_uuid']] = migration
        for request in lb_migrations.open_requests(self.db):
            server = servers.get(request['instance_uuid'])
            if server and server.get('OS-EXT-STS:task_state') and request['destination']:
                found.setdefault(request['instance_uuid'], {
                    'instance_uuid': request['instance_uuid'],
                    'source_compute': request['source'],
                    'dest_compute': request['destination']})
        result = []
        for uuid, migration in found.items():
            source, dest = migration.get('source_compute'), migration.get('dest_compute')
            if uuid in servers and source in known_hosts and dest in known_hosts:
                result.append(model.InFlightMigration(uuid, source, dest))
        return result

    @staticmethod
    def _clusters(aggregates):
        membership = {}
        for aggregate in sorted(aggregates, key=lambda a: a['name']):
            for host in aggregate.get('hosts', ()):
                membership.setdefault(host, []).append(aggregate)
        return membership

    @staticmethod
    def _cluster_of(host, membership):
        """The first aggregate (by name) carrying a drs_policy is the host's cluster."""
        for aggregate in membership.get(host, ()):
            if 'drs_policy' in (aggregate.get('metadata') or {}):
                return aggregate['name']
        return 'default'


class Rules:
    """Allow/deny rules; last match wins, default allow (as the 2015 tool)."""

    TYPES = ('host', 'aggregate', 'availability_zone')

    def __init__(self, rules):
        self._rules = [(r['type'], re.compile(r['value']), r['allow']) for r in rules]

    def allows(self, host, aggregates, hypervisor=None, service=None):
        verdict = True
        zone = (service or {}).get('zone')
        for kind, pattern, allow in self._rules:
            if kind == 'host':
                names = (host,)
            elif kind == 'aggregate':
                names = tuple(a['name'] for a in aggregates)
            else:
                names = (zone,) if zone else ()
            if any(pattern.fullmatch(name) for name in names):
                verdict = allow
        return verdict
