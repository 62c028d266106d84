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

"""Destination choice: power-aware best-fit decreasing (CloudSim PABFD)."""

from nova_drs.loadbalancer import power
from nova_drs.loadbalancer import schema


class PowerAwareBestFit:
    """PABFD: among hosts the instance fits on and which the overload
    detector would not flag afterwards, take the one whose power grows
    least.  Like CloudSim, a switched-off host is priced from its idle
    power (not from zero) and is not checked for overload.
    """

    PARAMETERS = schema.NONE

    def __init__(self, overload):
        self.overload = overload

    def candidates(self, state, allow_wake):
        hosts = state.active_hosts
        if not allow_wake:
            return hosts
        # All switched-off hosts of one kind score alike: try the first only.
        seen, extra = set(), []
        for i in state.suspended_hosts:
            kind = (state.capacity[i], state.pe_capacity[i], state.curve[i], state.cluster[i])
            if kind not in seen and i not in state.wake_planned:
                seen.add(kind)
                extra.append(i)
        return sorted(hosts + extra + sorted(state.wake_planned))

    def find_host(self, state, j, excluded, allow_wake=True, check_overload=True):
        need = state.vm_demand[j]
        best, best_delta = None, float('inf')
        demand, capacity = state.demand, state.capacity
        asleep = state.suspended_set
        for i in self.candidates(state, allow_wake):
            if i in excluded or not (state.is_usable(i) or allow_wake and i in asleep):
                continue
            if not state.fits(j, i):
                continue
            cap = capacity[i]
            delta = (power.power(state.curve[i], (min(demand[i], cap) + need) / cap)
                     - state.start_power[i])
            if delta >= best_delta:
                continue
            if check_overload and demand[i] != 0 and self._overloaded_after(state, j, i):
                continue
            best, best_delta = i, delta
        return best

    def _overloaded_after(self, state, j, i):
        state.attach(j, i)
        try:
            return self.overload.is_overloaded(state, i)
        finally:
            state.detach(j)


class FirstFit:
    """The first host, in snapshot order, the instance fits on; CloudSim's
    PowerVmAllocationPolicySimple, used by its no-migration (dvfs) baseline."""

    PARAMETERS = schema.NONE

    def place_new(self, state, j):
        for i in range(len(state.host_names)):
            if state.is_usable(i) and state.fits(j, i):
                state.attach(j, i)
                return i
        return None
