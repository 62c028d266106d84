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

from nova_drs.weights import base


class EvenDistributionWeigher(base.ClusterPolicyWeigher):
    """Prefers the host with the lowest measured CPU/RAM load.

    Acts only on hosts whose policy is ``even_distribution``. The load is the
    highest of CPU and RAM use in percent as reported by the nova-drs compute
    monitor in the host's stats (``drs_cpu_used_percent``,
    ``drs_memory_used_mb`` / ``drs_memory_total_mb``) and the allocation
    (per-aggregate ratios), which already counts instances placed since the
    last report. Weight = 100 - load; other hosts weigh 0.
    """

    POLICY = 'even_distribution'
    MULTIPLIER = ('drs_even_distribution_weight_multiplier',
                  'even_distribution_weight_multiplier')

    def _weigh(self, view, host_state, spec_obj):
        return max(0.0, 100.0 - base.measured_load_percent(view, host_state))
