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

"""Spread instances on measured load (even-distribution policy)."""

from nova.scheduler import weights

from nova_drs import conf as drs_conf
from nova_drs.filters import overcommit_base
from nova_drs.weights import policy

CONF = drs_conf.CONF


class EvenDistributionWeigher(weights.BaseHostWeigher):
    """Prefers the host with the lowest measured CPU/RAM load.

    Acts only on hosts whose policy is ``even_distribution``. The load is the
    highest of CPU and RAM use in percent as reported by the nova-drs compute
    monitor in the host's stats (``drs_cpu_used_percent``,
    ``drs_memory_used_mb`` / ``drs_memory_total_mb``) and the allocation
    (per-aggregate ratios), which already counts instances placed since the
    last report. Weight = 100 - load; other hosts weigh 0.
    """

    minval = 0
    maxval = 100

    def __init__(self):
        self._multiplier = policy.AggregateMultiplier(
            'drs_even_distribution_weight_multiplier', 'even_distribution_weight_multiplier')

    def weight_multiplier(self, host_state):
        return self._multiplier(host_state)

    def weigh_objects(self, weighed_obj_list, spec_obj):
        self._multiplier.reset()
        view = overcommit_base.request_view(spec_obj)
        return [self._weigh(view, weighed.obj) for weighed in weighed_obj_list]

    def _weigh_object(self, host_state, spec_obj):
        return self._weigh(overcommit_base.request_view(spec_obj), host_state)

    @staticmethod
    def _weigh(view, host_state):
        if policy.view_policy(view, host_state) != 'even_distribution':
            return 0.0
        return max(0.0, 100.0 - policy.measured_load_percent(view, host_state))
