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

"""compute_units consumer: free cu of a host, and the cu filter."""

from nova import context as nova_context
from nova import objects
from oslo_log import log as logging

from nova_drs.resources import base
from nova_drs.resources import units

LOG = logging.getLogger(__name__)


def instances_on_host(host_state, uuids):
    """Flavor extra specs of those ``uuids`` that really are on the host now.

    One query in the host's cell; drops instances the scheduler's view still
    lists but that were deleted or migrated away.
    """
    context = nova_context.get_admin_context()
    cell = objects.CellMapping.get_by_uuid(context, host_state.cell_uuid)
    with nova_context.target_cell(context, cell) as cell_context:
        instances = objects.InstanceList.get_by_filters(
            cell_context, {'uuid': sorted(uuids), 'host': host_state.host, 'deleted': False},
            expected_attrs=['flavor'])
    return [instance.flavor.extra_specs for instance in instances]


class ComputeUnitsConsumer(base.SchedulerConsumerPlugin):
    """Passes a host when its free compute units cover the flavor's ``drs:cu``.

    Free cu = ``drs_cu_total - drs_cu_used`` reported by the host at its last
    period, minus the ``drs:cu`` of instances placed on the host since (in
    nova's scheduler view of the host but not in ``drs_cu_instances``; one
    database query confirms they are on the host), minus what this request
    placed there already. Deleted and migrated-away instances are released at
    the host's next period. Flavors without ``drs:cu`` pass everywhere; hosts
    that report no cu capacity fail flavors that ask for cu.
    """

    def __init__(self, lookup=instances_on_host):
        self._lookup = lookup

    def update_from_compute_node(self, host_state, stats):
        total = stats.get(units.CU_TOTAL_KEY)
        used = int(stats.get(units.CU_USED_KEY) or 0)
        if units.CU_INSTANCES_KEY in stats:
            counted = set(filter(None, stats[units.CU_INSTANCES_KEY].split(',')))
            placed_since = set(getattr(host_state, 'instances', None) or ()) - counted
            if placed_since:
                pending = sum(units.requested_cu(extra_specs)
                              for extra_specs in self._lookup(host_state, placed_since))
                LOG.debug('%s: %d cu of instances placed since its last count',
                          host_state.host, pending)
                used += pending
        host_state.drs[self.name] = {
            'total': int(total) if total is not None else None,
            'used': used,
        }

    def consume_from_request(self, host_state, spec):
        host_state.drs[self.name]['used'] += units.requested_cu(spec.flavor.extra_specs)

    def host_passes(self, host_state, spec):
        wanted = units.requested_cu(spec.flavor.extra_specs)
        if not wanted:
            return True
        cu = host_state.drs[self.name]
        if cu['total'] is None:
            LOG.debug('%s reports no compute units, needed %d', host_state.host, wanted)
            return False
        free = cu['total'] - cu['used']
        if free < wanted:
            LOG.debug('%s has %d cu free, needed %d', host_state.host, free, wanted)
            return False
        return True
