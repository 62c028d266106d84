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

"""Compute hosts as nova knows them, read in-process through nova's DB and objects APIs.

The filter runs inside nova-api, so it asks nova's cell databases directly
(one query for compute nodes and one for instance counts per cell, all cells
in parallel) with the caller's request context, like nova's own
os-hypervisors API does. Compute nodes are read as the plain rows nova's DB
API returns: building 500 ComputeNode objects (JSON fields, PCI pools, NUMA
topology) costs ~55 ms per request, the rows ~10 ms, and only four columns
are used.
"""

from nova import context as nova_context
from nova import exception as nova_exception
from nova import objects
from nova.db.main import api as nova_db
from oslo_log import log as logging

from nova_drs import opt_out

LOG = logging.getLogger(__name__)


def _merge(hosts, node):
    entry = hosts.setdefault(node['host'], {
        'host': node['host'],
        'hypervisor_hostname': node['hypervisor_hostname'],
        'vcpus': 0,
        'memory_total': 0,
    })
    # Several nodes on one service host (e.g. ironic): one DRS host.
    entry['vcpus'] += node['vcpus'] or 0
    entry['memory_total'] += node['memory_mb'] or 0


def _cell_hosts(cell_context, host):
    if host is None:
        nodes = nova_db.compute_node_get_all(cell_context)
    else:
        try:
            nodes = nova_db.compute_node_get_all_by_host(cell_context, host)
        except nova_exception.ComputeHostNotFound:
            return {}
    hosts = {}
    for node in nodes:
        _merge(hosts, node)
    if hosts:
        instances = objects.InstanceList.get_uuids_by_hosts(cell_context, list(hosts))
        for name, entry in hosts.items():
            entry['instances'] = len(instances.get(name, ()))
        _add_service_status(cell_context, host, hosts)
    return hosts


def _add_service_status(cell_context, host, hosts):
    """``compute_service``: whether nova schedules to the host (its nova-compute
    service ``enabled`` or ``disabled``), what ``maintenance exit --wait`` awaits."""
    if host is None:
        services = nova_db.service_get_all_by_binary(cell_context, 'nova-compute',
                                                     include_disabled=True)
    else:
        try:
            services = [nova_db.service_get_by_compute_host(cell_context, host)]
        except nova_exception.ComputeHostNotFound:
            services = []
    for service in services:
        if service['host'] in hosts:
            hosts[service['host']]['compute_service'] = (
                'disabled' if service['disabled'] else 'enabled')


def compute_hosts(context, host=None):
    """{host: {host, hypervisor_hostname, vcpus, memory_total, instances,
    compute_service}}.

    With ``host``, only that host (an empty dict when nova does not know it).
    A cell that does not answer is logged and left out.
    """
    hosts = {}
    for result in _every_cell(context, _cell_hosts, host, 'hosts'):
        hosts.update(result)
    return hosts


def _every_cell(context, function, host, what):
    """``function(cell_context, host)`` of each cell that answered."""
    results = nova_context.scatter_gather_skip_cell0(context, function, host)
    for cell_uuid, result in results.items():
        if nova_context.is_cell_failure_sentinel(result):
            LOG.warning('nova-drs API: cell %s did not answer; its %s are left out',
                        cell_uuid, what)
            continue
        yield result


def _cell_pinned(cell_context, host):
    found = []
    for instance in objects.InstanceList.get_by_host(
            cell_context, host, expected_attrs=['metadata', 'flavor']):
        level = opt_out.level(instance.metadata, instance.flavor.extra_specs, instance.uuid)
        if level is not None:
            found.append({'id': instance.uuid, 'level': level})
    return found


def pinned_servers(context, host):
    """[{id, level}] of the servers on ``host`` opted out with ``drs:automation``."""
    pinned = [server for result in _every_cell(context, _cell_pinned, host, 'servers')
              for server in result]
    return sorted(pinned, key=lambda server: server['id'])
