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

"""The View of a cycle: the Raw that ``observe`` read, turned into the core's
Snapshot plus what the act step needs. Pure, no I/O (tested without nova).

Capacity is counted in vCPUs: a host's ``mips`` is its physical vCPU count
and an instance's is its flavor's vCPUs, so utilisation fractions mean the
same in the simulator.
"""

import dataclasses
import datetime
import threading

from oslo_log import log as logging

from nova_drs import cluster_policy
from nova_drs import exception
from nova_drs import membership as aggregate_membership
from nova_drs import opt_out
from nova_drs import rule_patterns
from nova_drs.clients import nova_api
from nova_drs.loadbalancer import findings
from nova_drs.loadbalancer import model

#: Every non-final migration status nova has: resources held on both ends.
IN_FLIGHT_NOVA = frozenset(('queued', 'preparing', 'running', 'pre-migrating', 'migrating',
                            'post-migrating', 'finished', 'confirming', 'accepted'))
#: A migration in these states left the server where it was: no cooldown.
NOT_MOVED_NOVA = frozenset(('failed', 'error', 'cancelled', 'reverted'))
#: Kinds that move a server (resize and evacuation are not balancing moves).
MOVES_NOVA = frozenset(('live-migration', 'migration'))
STATE_BY_STATUS = {'ACTIVE': 'active', 'PAUSED': 'paused', 'SHUTOFF': 'stopped'}

LOG = logging.getLogger(__name__)


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
    #: host -> observe.HostFault: hosts a fault of their own left out of the cycle.
    faulty_hosts: dict = dataclasses.field(default_factory=dict)
    #: host -> [(aggregate name, metadata)] (nova_drs.membership),
    #: read once per cycle: clusters, policies, automation and rules.
    membership: dict = dataclasses.field(default_factory=dict)
    #: host -> (refusal, why) of every host kept out of the plan (``excluded``
    #: in the snapshot): what explain names, decided once, here.
    excluded_by: dict = dataclasses.field(default_factory=dict)


def build_view(raw, rules, stats_max_age):
    """The View of a Raw: pure, no I/O (tested without nova)."""
    hypervisors = [h for h in raw.hypervisors
                   if h.get('service', {}).get('host') in raw.services]
    membership = aggregate_membership.of_listed(raw.aggregates)
    max_age = datetime.timedelta(seconds=stats_max_age)
    excluded_by = {}
    for hypervisor in hypervisors:
        name = hypervisor['service']['host']
        why = _exclusion(raw, name, membership, rules, max_age)
        if why is not None:
            excluded_by[name] = why
    hosts = [_host(raw, hypervisor, membership, excluded_by) for hypervisor in hypervisors]
    stale = [h.name for h in hosts if not _fresh(raw, h.name, max_age)]
    known_hosts = {h.name for h in hosts}
    instances, levels = _instances(raw, known_hosts)
    snapshot = model.Snapshot(
        hosts=tuple(hosts), instances=tuple(instances),
        migrations=tuple(_in_flight(raw, known_hosts)), now=raw.now.timestamp())
    return View(snapshot=snapshot, services=raw.services, servers=raw.servers,
                clusters={a['name']: a.get('metadata') or {} for a in raw.aggregates},
                stale_hosts=tuple(stale), aggregates=raw.aggregates,
                hypervisors=hypervisors, inventories=raw.inventories,
                in_flight=under_way(raw), opt_out=levels, faulty_hosts=dict(raw.faulty),
                membership=membership, excluded_by=excluded_by)


def _fresh(raw, name, max_age):
    """Whether the DRS database received a sample of ``name`` within ``max_age``
    (its own clock: a compute's clock or a delivery backlog does not count)."""
    age = raw.stats_age.get(name)
    return age is not None and age <= max_age.total_seconds()


def _exclusion(raw, name, membership, rules, max_age):
    """(refusal, why) of a host kept out of the plan, or None. The first that
    applies names it: a fault of its own left it out of this cycle, its
    statistics are stale, a rule denies it, or nova has it down or disabled
    by someone else."""
    fault = raw.faulty.get(name)
    if fault is not None:
        return findings.Refusal.HOST_FAULT.value, 'left out of this cycle: %s' % fault
    if not _fresh(raw, name, max_age):
        return (findings.Refusal.STALE.value,
                'stale statistics (no fresh sample within stats_max_age)')
    service = raw.services[name]
    rule = rules.deciding(name, membership.get(name, ()), service=service)
    if rule is not None and not rule['allow']:
        return findings.Refusal.RULE.value, 'denied by rule %s (%s %s)' % (
            rule['id'], rule['type'], rule['value'])
    if service.get('forced_down') or (service['status'] == 'disabled'
                                      and not raw.records[name]['disabled_by_drs']):
        return findings.Refusal.EXCLUDED.value, 'nova service disabled or forced down'
    return None


def _host(raw, hypervisor, membership, excluded_by):
    """A hypervisor as a core Host: capacity from placement, excluded when
    ``excluded_by`` names it."""
    name = hypervisor['service']['host']
    inventory = raw.inventories.get(hypervisor['id'], {}).get('inventories', {})
    vcpu = inventory.get('VCPU', {})
    ram = inventory.get('MEMORY_MB', {})
    record = raw.records[name]
    return model.Host(
        name=name,
        vcpus=int(vcpu.get('total', 0)) - int(vcpu.get('reserved', 0)),
        ram_mb=int(ram.get('total', 0)) - int(ram.get('reserved', 0)),
        mips=float(max(int(vcpu.get('total', 0)), 1)),
        pe_mips=1.0,
        cluster=cluster_policy.cluster_name(membership.get(name, ())),
        cpu_allocation_ratio=float(vcpu.get('allocation_ratio', 1.0)),
        ram_allocation_ratio=float(ram.get('allocation_ratio', 1.0)),
        power_state=record['suspend_state'],
        excluded=name in excluded_by,
        suspendable=raw.suspendable.get(name, False),
        cpu_history=raw.cpu_history.get(name, ()))


def _server_groups(groups):
    """{member uuid: (group id, affinity policy or None)}."""
    group_of = {}
    for group in groups:
        policy = group.get('policy') or (group.get('policies') or [None])[0]
        for member in group.get('members', ()):
            group_of[member] = (group['id'], policy if policy in (
                model.AFFINITY, model.ANTI_AFFINITY) else None)
    return group_of


def _instances(raw, known_hosts):
    """(core Instances of the servers on known hosts, {uuid: opt-out level})."""
    group_of = _server_groups(raw.groups)
    moved_at = last_moved(raw.recent_migrations, raw.recent_requests)
    levels, instances = {}, []
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
            left_host=moved_at.get(uuid, (None, None))[1],
            movable=level is None and uuid not in raw.held_servers))
    return instances, levels


def last_moved(migrations, requests=()):
    """{uuid: (POSIX time, source host)} of its newest move that ran, runs or
    was tried: the start of the planner's cooldown, and the host a cooling
    server must not go back to.

    The one cooldown rule, read by the core (``last_migrated_at``): nova's
    live and cold migrations, and the moves the daemon requested
    (``requests``: lb_migrations rows), which nova lists only once it has
    them. A request that failed starts the cooldown too, with no host left
    (the server never left): the orchestrator gives a server one try per
    cooldown (lb_migrations.held_back), so a plan that counted on moving it
    again would only be refused.
    """
    newest = {}

    def note(uuid, when, source):
        if uuid not in newest or when > newest[uuid][0]:
            newest[uuid] = (when, source or newest.get(uuid, (None, None))[1])

    for migration in migrations:
        if (migration.get('migration_type') not in MOVES_NOVA
                or migration.get('status') in NOT_MOVED_NOVA):
            continue
        stamp = migration.get('updated_at') or migration.get('created_at')
        if stamp:
            note(migration['instance_uuid'], nova_api.parse_time(stamp).timestamp(),
                 migration.get('source_compute'))
    for request in requests:
        note(request['instance_uuid'], request['created_at'].timestamp(),
             request['source'] if request.get('moved', True) else None)
    return newest


def compute_nodes_by_host(hypervisors):
    """{host: [compute node id]} of a hypervisor listing: a compute node's id is
    its resource provider's uuid (what the placement check of an emptied host
    asks about)."""
    nodes = {}
    for hypervisor in hypervisors:
        nodes.setdefault(hypervisor['service']['host'], []).append(hypervisor['id'])
    return nodes


def cluster_of_hosts(raw):
    """{host: cluster} without building a whole view."""
    membership = aggregate_membership.of_listed(raw.aggregates)
    return {host: cluster_policy.cluster_name(membership.get(host, ()))
            for host in raw.services}


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
    """Migrations nova runs now (resources held on both ends), ours it has not
    listed yet, and the moves a suspend's evacuation is about to start to the
    destinations its plan chose (the core reserves them there, not on a guess)."""
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
    for uuid, (source, destination) in raw.evacuation_targets.items():
        server = raw.servers.get(uuid)
        if server and server.get('OS-EXT-SRV-ATTR:host') == source:
            found.setdefault(uuid, {'instance_uuid': uuid, 'source_compute': source,
                                    'dest_compute': destination})
    result = []
    for uuid, migration in sorted(found.items()):
        source, dest = migration.get('source_compute'), migration.get('dest_compute')
        if uuid in raw.servers and source in known_hosts and dest in known_hosts:
            result.append(model.InFlightMigration(uuid, source, dest))
    return result


class Rules:
    """Allow/deny rules; last match wins, default allow (as the 2015 tool).

    A stored rule whose pattern rule_patterns refuses (written to the
    database outside the API, or before the check existed) or whose type is
    unknown is left out, with one warning: it never stops the cycle.
    """

    TYPES = ('host', 'aggregate', 'availability_zone')
    _warned = set()
    _warned_lock = threading.Lock()

    def __init__(self, rules):
        self._rules = []
        for rule in rules:
            try:
                if rule['type'] not in self.TYPES:
                    raise exception.UnsafePattern('unknown rule type %r' % rule['type'])
                pattern = rule_patterns.compile_rule(rule['value'])
            except exception.UnsafePattern as exc:
                self._disable(rule, exc)
                continue
            self._rules.append((rule['type'], pattern, rule))

    @classmethod
    def _disable(cls, rule, reason):
        marker = (rule.get('id'), rule['type'], rule['value'])
        with cls._warned_lock:
            first = marker not in cls._warned
            cls._warned.add(marker)
        if first:
            LOG.warning('rule %s (%s %r) disabled: %s; delete it and create a valid one',
                        rule.get('id'), rule['type'], str(rule['value'])[:255], reason)

    def deciding(self, host, aggregates, service=None):
        """The rule (dict as given) that decides for the host: the last match."""
        decided = None
        zone = (service or {}).get('zone')
        for kind, pattern, rule in self._rules:
            if kind == 'host':
                names = (host,)
            elif kind == 'aggregate':
                names = tuple(name for name, _metadata in aggregates)
            else:
                names = (zone,) if zone else ()
            if any(pattern.fullmatch(name) for name in names):
                decided = rule
        return decided
