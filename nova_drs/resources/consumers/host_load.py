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

"""host_load consumer: the host's measured CPU and memory use."""

from nova_drs.resources import base
from nova_drs.resources.plugins import host_load


def _number(stats, key):
    value = stats.get(key)
    return None if value in (None, '') else float(value)


class HostLoadConsumer(base.SchedulerConsumerPlugin):
    """Puts ``cpu_used_percent``, ``memory_used_mb``, ``memory_total_mb`` in ``host_state.drs``.

    Hosts that report nothing (monitor not enabled) get None values. Placing
    an instance adds its flavor memory to ``memory_used_mb`` so several
    instances of one request spread as nova's own RAM accounting would.
    """

    def update_from_compute_node(self, host_state, stats):
        host_state.drs[self.name] = {
            'cpu_used_percent': _number(stats, host_load.CPU_KEY),
            'memory_used_mb': _number(stats, host_load.MEMORY_USED_KEY),
            'memory_total_mb': _number(stats, host_load.MEMORY_TOTAL_KEY),
        }

    def consume_from_request(self, host_state, spec):
        load = host_state.drs[self.name]
        if load['memory_used_mb'] is not None:
            load['memory_used_mb'] += spec.memory_mb
