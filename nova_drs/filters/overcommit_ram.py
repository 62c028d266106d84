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

"""RAM capacity with per-aggregate ram_allocation_ratio (CloudStack accounting)."""

from nova_drs.filters import overcommit_base


class OvercommitRamFilter(overcommit_base.OvercommitFilterBase):
    """Passes hosts with enough RAM left at their aggregate's RAM ratio.

    The ratio is the smallest valid ``ram_allocation_ratio`` metadata of the
    host's aggregates, else the host's own ratio. Instances deployed with a
    smaller ratio count ``memory_mb / x * y``; a host left over 100 % by a
    lowered ratio accepts nothing (not even a 0 MB flavor) and raises an alert.
    """

    RESOURCE = 'memory_mb'
    LIMIT = 'memory_mb'

    def figures(self, view, host_state):
        return view.ram_figures(host_state)
