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

"""What nova knows about aggregates, compute nodes and instances (read only).

Uses nova's own objects, so it works wherever nova.conf gives access to
nova's API and cell databases (controllers, nova-drs-manage, the daemon).
nova is imported inside the functions that read it: the daemon imports this
module for ``aggregates_by_host`` only and must not load nova (and eventlet
with it) at start.
"""

from nova_drs.overcommit import ratios


def aggregates(ctxt):
    """[{'name', 'id', 'hosts', 'metadata'}] of every host aggregate."""
    from nova import objects
    return [{'name': agg.name, 'id': agg.id, 'hosts': list(agg.hosts or []),
             'metadata': dict(agg.metadata or {})}
            for agg in objects.AggregateList.get_all(ctxt)]


class _Aggregate:
    def __init__(self, record):
        self.name, self.id, self.metadata = record['name'], record['id'], record['metadata']


def aggregates_by_host(aggregate_records):
    """{host: [aggregate-like objects]} for ratios.aggregate_ratio()."""
    by_host = {}
    for record in aggregate_records:
        for host in record['hosts']:
            by_host.setdefault(host, []).append(_Aggregate(record))
    return by_host


def _results(gathered):
    from nova import context as nova_context
    for cell_uuid, result in gathered.items():
        if isinstance(result, Exception) or result is nova_context.did_not_respond_sentinel:
            raise RuntimeError('cell %s did not answer: %s' % (cell_uuid, result))
        yield from result


def compute_nodes(ctxt):
    """{host: [compute node dict]} across all cells."""
    from nova import context as nova_context
    from nova import objects
    nodes = {}
    gathered = nova_context.scatter_gather_skip_cell0(ctxt, objects.ComputeNodeList.get_all)
    for node in _results(gathered):
        nodes.setdefault(node.host, []).append({
            'uuid': node.uuid, 'nodename': node.hypervisor_hostname,
            'vcpus': node.vcpus, 'vcpus_used': node.vcpus_used,
            'memory_mb': node.memory_mb, 'memory_mb_used': node.memory_mb_used,
            'cpu_allocation_ratio': node.cpu_allocation_ratio,
            'ram_allocation_ratio': node.ram_allocation_ratio})
    return nodes


def instances(ctxt):
    """[{'uuid', 'host', 'vcpus', 'memory_mb', 'launched_at'}] of every
    non-deleted instance on a host."""
    from nova import context as nova_context
    from nova import objects
    def _list(cctxt):
        return objects.InstanceList.get_by_filters(
            cctxt, {'deleted': False}, expected_attrs=['flavor'])
    gathered = nova_context.scatter_gather_skip_cell0(ctxt, _list)
    return [{'uuid': inst.uuid, 'host': inst.host, 'vcpus': inst.flavor.vcpus,
             'memory_mb': inst.flavor.memory_mb,
             'launched_at': inst.launched_at or inst.created_at}
            for inst in _results(gathered) if inst.host]


#: Resource classes ``drs host show`` reports allocation of, in this order.
SHOWN_RESOURCE_CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')


def allocation(inventories, usages):
    """[{resource_class, allocated, capacity, allocation_ratio, used_percent}]
    of one resource provider, as placement counts them: capacity is
    ``(total - reserved) * allocation_ratio``; what the scheduler can still
    place is ``capacity - allocated``.

    ``inventories``: {class: inventory fields}; ``usages``: {class: used}.
    """
    rows = []
    for resource_class in SHOWN_RESOURCE_CLASSES:
        inventory = inventories.get(resource_class)
        if inventory is None:
            continue
        ratio = inventory['allocation_ratio']
        capacity = (inventory['total'] - (inventory.get('reserved') or 0)) * ratio
        allocated = usages.get(resource_class, 0)
        rows.append({'resource_class': resource_class, 'allocated': allocated,
                     'capacity': capacity, 'allocation_ratio': ratio,
                     'used_percent': round(100.0 * allocated / capacity, 1)
                     if capacity > 0 else None})
    return rows


def _placement_json(placement, path):
    response = placement.get(path)
    if response.status_code != 200:
        raise RuntimeError('placement answered %s to GET %s' % (response.status_code, path))
    return response.json()


def host_allocation(ctxt, host, placement):
    """``allocation()`` of every compute node of ``host`` (one on most drivers),
    summed per resource class when there are several. ``placement``: what
    nova-api itself talks to placement with (its SchedulerReportClient, whose
    ``get`` uses nova's ``[placement]`` settings, timeout included)."""
    from nova import context as nova_context
    from nova import objects
    mapping = objects.HostMapping.get_by_host(ctxt, host)
    with nova_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
        nodes = objects.ComputeNodeList.get_all_by_host(cctxt, host)
    rows = []
    for node in nodes:
        path = '/resource_providers/%s/' % node.uuid
        inventories = _placement_json(placement, path + 'inventories')['inventories']
        usages = _placement_json(placement, path + 'usages')['usages']
        rows += allocation(inventories, usages)
    if len(nodes) < 2:
        return rows
    summed = {}
    for row in rows:
        into = summed.setdefault(row['resource_class'], dict(row, allocated=0, capacity=0))
        into['allocated'] += row['allocated']
        into['capacity'] += row['capacity']
    for row in summed.values():
        row['used_percent'] = (round(100.0 * row['allocated'] / row['capacity'], 1)
                               if row['capacity'] > 0 else None)
    return list(summed.values())


class RatioLookup:
    """Current (cpu, ram) ratios of a host: its aggregates', else its own."""

    def __init__(self, conf):
        self._conf = conf

    def __call__(self, host):
        from nova import context as nova_context
        from nova import objects
        ctxt = nova_context.get_admin_context()
        aggs = objects.AggregateList.get_by_host(ctxt, host)
        cpu_own, ram_own = self._own_ratios(ctxt, host)
        return ratios.host_ratios(aggs, cpu_own, ram_own)

    def _own_ratios(self, ctxt, host):
        from nova import context as nova_context
        from nova import exception
        from nova import objects
        try:
            mapping = objects.HostMapping.get_by_host(ctxt, host)
            with nova_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
                node = objects.ComputeNodeList.get_all_by_host(cctxt, host)[0]
            return node.cpu_allocation_ratio, node.ram_allocation_ratio
        except (exception.NotFound, IndexError):
            return (self._conf.initial_cpu_allocation_ratio,
                    self._conf.initial_ram_allocation_ratio)
