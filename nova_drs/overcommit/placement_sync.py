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

"""Push per-aggregate ratios into placement, and the capacity report.

Placement drops hosts on its own ``allocation_ratio`` before any filter
runs, so every member host's VCPU/MEMORY_MB inventory must carry the
aggregate's ratio. ``sync`` writes only what differs, retries on inventory
generation conflicts and notices computes that overwrite the ratio from
their own nova.conf. A host it wrote a ratio for that no aggregate sets any
more (it left the aggregate, the aggregate was deleted or its key unset)
gets its default back: nova-compute would never restore it, since it keeps
placement's ratio when its own ``[DEFAULT] *_allocation_ratio`` is unset.
Every ratio it changes that leaves a host over 100 % is returned in
``SyncResult.exceeded`` for the caller to alert on. It speaks to placement
through an openstacksdk placement proxy: nova's own
(``nova.utils.get_sdk_adapter``) in nova-drs-manage, the daemon's
Connection's in nova-loadbalancer.
"""

import dataclasses
import datetime

from openstack import exceptions as sdk_exc
from oslo_utils import timeutils

from nova_drs import exception
from nova_drs.clients import placement_usages
from nova_drs.db import overcommit as db_overcommit
from nova_drs.overcommit import accounting
from nova_drs.overcommit import nova_view
from nova_drs.overcommit import ratios

MAX_CONFLICT_RETRIES = 5
#: An inventory record's fields in placement's API reference.
INVENTORY_FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
                    'allocation_ratio')
RESOURCES = (('VCPU', accounting.CPU_KEY), ('MEMORY_MB', accounting.RAM_KEY))
#: The capacity report's (and the alerts') name of each resource class.
RESOURCE_NAMES = {'VCPU': 'vcpus', 'MEMORY_MB': 'memory_mb'}
#: nova's ``initial_*_allocation_ratio`` defaults: what a compute node gets
#: when neither nova.conf option is set.
NOVA_INITIAL_RATIOS = {accounting.CPU_KEY: 4.0, accounting.RAM_KEY: 1.0}


@dataclasses.dataclass(frozen=True)
class Change:
    aggregates: str
    host: str
    node: str
    resource_class: str
    old: float
    new: float


@dataclasses.dataclass(frozen=True)
class Exceeded:
    """A host a ratio change left using more than its capacity."""

    host: str
    resource: str
    capacity: accounting.Capacity


@dataclasses.dataclass
class SyncResult:
    changes: list = dataclasses.field(default_factory=list)
    warnings: list = dataclasses.field(default_factory=list)
    exceeded: list = dataclasses.field(default_factory=list)


def default_ratio(conf, key):
    """The ratio nova-compute gives a new compute node: ``[DEFAULT] key`` when
    set, else ``initial_<key>`` (nova.virt.driver._get_allocation_ratios)."""
    for name in (key, 'initial_' + key):
        try:
            value = getattr(conf, name)
        except AttributeError:      # oslo.config's NoSuchOptError included
            value = None
        if value:
            return value
    return NOVA_INITIAL_RATIOS[key]


def _usage(placement, rp_uuid, resource_class):
    """Placement's usage of one class, or None when it cannot be read."""
    try:
        usages = placement_usages.provider_usages(placement, rp_uuid)
    except sdk_exc.SDKException:
        return None
    return usages.get(resource_class, 0)


def _inventories(placement, rp_uuid):
    """placement's inventories body: {'inventories': {class: fields}, generation}."""
    try:
        found = list(placement.resource_provider_inventories(rp_uuid))
    except sdk_exc.SDKException as exc:
        raise exception.PlacementError('cannot read inventories of resource provider %s: %s'
                                       % (rp_uuid, exc)) from None
    body = {'inventories': {}, 'resource_provider_generation': None}
    for inventory in found:
        body['resource_provider_generation'] = inventory.resource_provider_generation
        body['inventories'][inventory.resource_class] = {
            field: getattr(inventory, field) for field in INVENTORY_FIELDS}
    return body


def _set_ratio(placement, rp_uuid, resource_class, ratio, body=None):
    """Write one inventory with a new allocation_ratio; re-read and retry on a conflict."""
    for _attempt in range(MAX_CONFLICT_RETRIES):
        body = body or _inventories(placement, rp_uuid)
        inventory = dict(body['inventories'][resource_class], allocation_ratio=ratio)
        try:
            placement.update_resource_provider_inventory(
                resource_class, rp_uuid,
                resource_provider_generation=body['resource_provider_generation'],
                **inventory)
            return
        except sdk_exc.ConflictException:
            body = None
        except sdk_exc.SDKException as exc:
            raise exception.PlacementError('cannot set %s allocation_ratio of resource provider '
                                           '%s: %s' % (resource_class, rp_uuid, exc)) from None
    raise exception.PlacementError('resource provider %s kept changing (generation conflict %d '
                                   'times); run the sync again' % (rp_uuid, MAX_CONFLICT_RETRIES))


def sync(placement, database, aggregates, nodes_by_host, only_aggregate=None,
         dry_run=False, known=None, conf=None):
    """Make placement's ratios of aggregate member hosts equal the aggregates'.

    ``aggregates``: nova_view.aggregates(); ``nodes_by_host``:
    nova_view.compute_nodes(). A host no aggregate gives a valid ratio is
    left alone unless the last sync wrote its ratio: then it goes back to
    its default, the compute node's own ``*_allocation_ratio`` when the node
    dict has it (what the capacity report shows), else ``default_ratio(conf)``.
    Returns a SyncResult with the changes made (or to make, dry run),
    warnings about computes that overwrite synced ratios and the hosts a
    change leaves over 100 %. ``known`` ({provider uuid: inventories body},
    e.g. what the daemon's observe read this cycle) saves re-reading those
    providers; a write still re-reads on a generation conflict.
    """
    known = known or {}
    if only_aggregate and only_aggregate not in {a['name'] for a in aggregates}:
        raise ValueError('no aggregate named %r' % only_aggregate)
    by_host = nova_view.aggregates_by_host(aggregates)
    previous = db_overcommit.synced_ratios(database)
    hosts = {host for agg in aggregates
             if only_aggregate in (None, agg['name']) for host in agg['hosts']}
    if only_aggregate is None:
        # Hosts whose written ratio may now be orphaned.
        hosts |= {host for host, _rc in previous}
    result = SyncResult()
    for host in sorted(hosts):
        host_aggs = by_host.get(host, [])
        names = ','.join(sorted(agg.name for agg in host_aggs)) or '-'
        nodes = nodes_by_host.get(host)
        if not nodes:
            if host_aggs:
                result.warnings.append('host %s (aggregate %s) has no compute node: '
                                       'skipped' % (host, names))
            continue
        for node in nodes:
            body = known.get(node['uuid']) or _inventories(placement, node['uuid'])
            _sync_node(placement, database, result, host, names, host_aggs, node, body,
                       {rc: previous.get((host, rc)) for rc, _key in RESOURCES},
                       dry_run, conf)
    return result


def _sync_node(placement, database, result, host, names, host_aggs, node, body,
               last_synced, dry_run, conf):
    """``sync`` of one compute node (inventories ``body``) of ``host``, member of
    ``host_aggs``; ``last_synced``: {resource class: ratio the last sync wrote}."""
    inventories = body['inventories']
    for resource_class, key in RESOURCES:
        target = ratios.aggregate_ratio(host_aggs, key, None)
        last = last_synced[resource_class]
        restoring = target is None and last is not None
        if restoring:
            target = node.get(key) or default_ratio(conf, key)
        if target is None or resource_class not in inventories:
            continue
        current = inventories[resource_class]['allocation_ratio']
        if not restoring and last is not None and last == target and current != target:
            result.warnings.append(
                'host %s: placement %s allocation_ratio was set to %s by the last '
                'sync but is now %s (nova-compute reports %s=%s): nova-compute on '
                '%s overwrites it because %s is set in its nova.conf; unset it '
                'there so the aggregate ratio persists'
                % (host, resource_class, target, current, key, node.get(key), host, key))
        if current != target:
            result.changes.append(Change(names, host, node['nodename'], resource_class,
                                         current, target))
            exceeded = _exceeded(placement, host, node['uuid'], resource_class,
                                 inventories[resource_class], target)
            if exceeded:
                result.exceeded.append(exceeded)
            if not dry_run:
                _set_ratio(placement, node['uuid'], resource_class, target, body)
                body = None     # its generation moved: re-read for the next class
        if dry_run:
            continue
        if restoring:
            # Back under nova-compute's control: no longer ours to watch.
            db_overcommit.forget_synced(database, host, resource_class)
        elif last != target:
            db_overcommit.remember_synced(database, host, resource_class, target)


def _exceeded(placement, host, rp_uuid, resource_class, inventory, ratio):
    """Exceeded when placement's usage is over the capacity at ``ratio``."""
    used = _usage(placement, rp_uuid, resource_class)
    if used is None:
        return None
    cap = accounting.capacity(inventory['total'] - (inventory.get('reserved') or 0),
                              ratio, used)
    return Exceeded(host, RESOURCE_NAMES[resource_class], cap) if cap.exceeded else None


def reconcile(database, instances, ratio_of_host, dry_run=False, hosts=()):
    """Record instances nova-drs never saw land, at the ratios of their launch.

    The current ratios of every host in ``hosts`` (and of the hosts of the
    instances) are added to the ratio history first, so a later ratio change
    is told apart from the ratios earlier instances were deployed with. An
    instance launched before its host's history starts gets the current
    ratios; one whose recorded host is not its host any more (a missed move
    notification) is re-recorded at the current ratios of its new host.
    Forgets recorded instances that no longer exist. Returns (recorded,
    forgotten) counts.
    """
    # Whole seconds: nova may store launched_at without its microseconds.
    now = timeutils.utcnow().replace(microsecond=0)
    current = {}

    def ratios_now(host):
        if host not in current:
            current[host] = tuple(ratio_of_host(host))
            if not dry_run:
                db_overcommit.note_ratios(database, host, current[host][0], current[host][1], now)
        return current[host]

    for host in hosts:
        ratios_now(host)
    recorded_hosts = db_overcommit.hosts_of_recorded(database)
    live = {inst['uuid'] for inst in instances}
    recorded = 0
    for inst in instances:
        known_on = recorded_hosts.get(inst['uuid'])
        if known_on == inst['host']:
            continue
        recorded += 1
        if dry_run:
            continue
        now_ratios = ratios_now(inst['host'])
        launched = _naive_utc(inst.get('launched_at'))
        deployed = (db_overcommit.ratios_at(database, inst['host'], launched)
                    if known_on is None and launched is not None else None)
        cpu_ratio, ram_ratio = deployed or now_ratios
        db_overcommit.record(database, inst['uuid'], inst['host'], inst['vcpus'],
                     inst['memory_mb'], cpu_ratio, ram_ratio, 'sync')
    gone = [uuid for uuid in recorded_hosts if uuid not in live]
    if not dry_run:
        for uuid in gone:
            db_overcommit.forget(database, uuid)
    return recorded, len(gone)


def _naive_utc(when):
    if when is None or when.tzinfo is None:
        return when
    return when.astimezone(datetime.timezone.utc).replace(tzinfo=None)


@dataclasses.dataclass(frozen=True)
class ReportRow:
    aggregates: str
    host: str
    resource: str
    capacity: accounting.Capacity


def report(database, aggregates, nodes_by_host):
    """Capacity of every host in an aggregate, with the deployed-with rule.

    Used = nova's used amount (flavor sizes, plus reserved host memory) plus
    the scaling of instances recorded with a smaller ratio (``f / x * y``).
    """
    by_host = nova_view.aggregates_by_host(aggregates)
    usage = db_overcommit.usage_by_host(database)
    rows = []
    for host in sorted(by_host):
        names = ','.join(sorted(agg.name for agg in by_host[host]))
        recorded = usage.get(host, {})
        for node in nodes_by_host.get(host, []):
            for resource, key, physical, used, own in (
                    ('vcpus', accounting.CPU_KEY, node['vcpus'], node['vcpus_used'],
                     node['cpu_allocation_ratio']),
                    ('memory_mb', accounting.RAM_KEY, node['memory_mb'],
                     node['memory_mb_used'], node['ram_allocation_ratio'])):
                ratio = ratios.aggregate_ratio(by_host[host], key, own)
                cap = accounting.capacity(physical, ratio, used, recorded.get(resource, {}))
                rows.append(ReportRow(names, host, resource, cap))
    return rows
