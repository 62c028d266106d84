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

"""vCPU capacity with per-aggregate cpu_allocation_ratio (CloudStack accounting)."""

from nova_drs.filters import overcommit_base


class OvercommitCoreFilter(overcommit_base.OvercommitFilterBase):
    """Passes hosts with enough vCPUs left at their aggregate's CPU ratio.

    The ratio is the smallest valid ``cpu_allocation_ratio`` metadata of the
    host's aggregates, else the host's own ratio. Instances deployed with a
    smaller ratio count ``vcpus / x * y`` (they keep their guaranteed share),
    so raising a ratio frees less than a naive ``physical * y`` would; a host
    left over 100 % by a lowered ratio accepts nothing and raises an alert.
    An instance larger than the host's physical vCPUs never fits.
    """

    RESOURCE = 'vcpus'
    LIMIT = 'vcpu'

    def figures(self, view, host_state):
        return view.cpu_figures(host_state)

    def _passes(self, view, host_state, requested):
        if requested > host_state.vcpus_total > 0:
            return False
        return super()._passes(view, host_state, requested)
