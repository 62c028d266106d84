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

from nova.scheduler import weights

from nova_drs import conf as drs_conf
from nova_drs.filters import overcommit_base
from nova_drs.weights import policy

CONF = drs_conf.CONF


class PowerSavingWeigher(weights.BaseHostWeigher):
    """Prefers the most allocated host that stays below the high-utilisation mark.

    Acts only on hosts whose policy is ``power_saving``. The weight is the
    host's CPU or RAM allocation (the higher one, per-aggregate ratios) in
    percent with the new instance counted, so the fullest host that can still
    take it wins and empty hosts are used last; a host that would go above
    ``high_utilization_percent`` gets the lowest weight. Other hosts weigh 0.
    """

    minval = 0
    maxval = 100

    def __init__(self):
        self._multiplier = policy.AggregateMultiplier(
            'drs_power_saving_weight_multiplier', 'power_saving_weight_multiplier')

    def weight_multiplier(self, host_state):
        return self._multiplier(host_state)

    def weigh_objects(self, weighed_obj_list, spec_obj):
        self._multiplier.reset()
        view = overcommit_base.request_view(spec_obj)
        return [self._weigh(view, weighed.obj, spec_obj) for weighed in weighed_obj_list]

    def _weigh_object(self, host_state, spec_obj):
        return self._weigh(overcommit_base.request_view(spec_obj), host_state, spec_obj)

    @staticmethod
    def _weigh(view, host_state, spec_obj):
        if policy.view_policy(view, host_state) != 'power_saving':
            return 0.0
        after = policy.allocated_percent(view, host_state, spec_obj)
        if after > policy.view_high_utilization(view, host_state):
            return 0.0
        return min(after, 100.0)
