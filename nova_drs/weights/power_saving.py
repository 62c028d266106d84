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

"""Pack instances onto busy hosts so idle hosts stay empty (power-saving policy)."""

from nova_drs.weights import base


class PowerSavingWeigher(base.ClusterPolicyWeigher):
    """Prefers the most allocated host that stays below the high-utilisation mark.

    Acts only on hosts whose policy is ``power_saving``. The weight is the
    host's CPU or RAM allocation (the higher one, per-aggregate ratios) in
    percent with the new instance counted, so the fullest host that can still
    take it wins and empty hosts are used last; a host that would go above
    ``high_utilization_percent`` gets the lowest weight. Other hosts weigh 0.
    """

    POLICY = 'power_saving'
    MULTIPLIER = ('drs_power_saving_weight_multiplier', 'power_saving_weight_multiplier')

    def _weigh(self, view, host_state, spec_obj):
        after = base.allocated_percent(view, host_state, spec_obj)
        if after > base.view_high_utilization(view, host_state):
            return 0.0
        return min(after, 100.0)
