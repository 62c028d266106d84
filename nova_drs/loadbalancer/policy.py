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

"""Policies compose the four algorithm kinds into one decision cycle."""

from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import schema

OVERLOAD = model.Reason.OVERLOAD.value
UNDERLOAD = model.Reason.UNDERLOAD.value


class ConsolidationPolicy:
    """Beloglazov & Buyya's cycle, as CloudSim's: relieve overloaded hosts,
    empty and suspend underloaded ones, wake a host when the cluster runs hot.

    The steps of PowerVmAllocationPolicyMigrationAbstract.optimizeAllocation:

    1. relieve overloaded hosts: pick instances until the detector is
       satisfied, place them (biggest demand first) avoiding overloaded hosts;
       a suspended host may be woken for them;
    2. try to empty underloaded hosts, in the selector's order, onto active
       hosts; a host is emptied only if all its instances find a place, and
       then suspended;
    3. optionally wake a host when the cluster runs hot (seed rule).
    """

    PARAMETERS = schema.NONE

    def __init__(self, overload, vm_selection, placement, underload, wake_rule=None):
        self.overload = overload
        self.vm_selection = vm_selection
        self.placement = placement
        self.underload = underload
        self.wake_rule = wake_rule

    def place_new(self, state, j):
        """Place a new instance; returns its host.

        At creation CloudSim's detectors see only the new VM's demand
        (created VMs request nothing until their workload starts), so only
        capacity and power count.
        """
        dest = self.placement.find_host(state, j, (), allow_wake=True, check_overload=False)
        if dest is not None:
            if dest in state.suspended_set:
                state.plan_wake(dest)
            state.attach(j, dest)
        return dest

    def decide(self, state, rng):
        overloaded = [i for i in state.active_hosts if self.overload.is_overloaded(state, i)]
        excluded = set(overloaded)
        self.relieve(state, overloaded, excluded, rng)
        self.consolidate(state, excluded)
        if self.wake_rule is not None:
            self.wake_rule.apply(state, overloaded)

    def relieve(self, state, overloaded, excluded, rng):
        leaving = []
        for i in overloaded:
            while True:
                j = self.vm_selection.select(state, i, rng)
                if j is None:
                    break
                state.detach(j)
                leaving.append((j, i))
                if not self.overload.is_overloaded(state, i):
                    break
        leaving.sort(key=lambda pair: -state.vm_demand[pair[0]])
        for j, source in leaving:
            dest = self.placement.find_host(state, j, excluded, allow_wake=True)
            if dest is None:
                state.attach(j, source)
                continue
            if dest in state.suspended_set:
                state.plan_wake(dest)
            state.attach(j, dest, OVERLOAD)

    def consolidate(self, state, overloaded):
        targets_excluded = set(overloaded)
        targets_excluded.update(i for i in state.active_hosts if state.start_utilisation[i] == 0)
        received = set()
        for i in self.underload.candidates(state, overloaded):
            if i in received or not state.vms[i] or not state.may_suspend(i):
                continue
            targets_excluded.add(i)
            placed = self.evacuate(state, i, targets_excluded)
            if placed is None:
                continue
            received.update(placed)
            state.plan_suspend(i)

    def evacuate(self, state, i, excluded):
        """Move every instance off host i or nothing; returns destinations."""
        journal = state.snapshot_journal()
        destinations = []
        for j in sorted(state.vms[i], key=lambda j: -state.vm_demand[j]):
            state.detach(j)
            dest = self.placement.find_host(state, j, excluded, allow_wake=False)
            if dest is None:
                state.attach(j, i)
                state.rollback(journal)
                return None
            state.attach(j, dest, UNDERLOAD)
            destinations.append(dest)
        return destinations


@schema.algorithm
class UnsuspendWhenHot:
    """Seed rule: if the cluster's mean CPU or RAM use is above the
    ``unsuspend_*`` thresholds and a host is overloaded, wake the first
    suspended host of that cluster."""

    PARAMETERS = schema.params(
        cpu=schema.fraction(0.8, 'cluster mean CPU above which a suspended host is woken'),
        memory=schema.fraction(0.8, 'cluster mean RAM use above which a suspended host is woken'))

    def apply(self, state, overloaded):
        for cluster in sorted({state.cluster[i] for i in overloaded}):
            members = [i for i in state.active_hosts if state.cluster[i] == cluster]
            if not members:
                continue
            cpu = sum(state.utilisation(i) for i in members) / len(members)
            ram = sum(state.used_ram[i] / state.ram_capacity[i] for i in members) / len(members)
            if cpu <= self.cpu and ram <= self.memory:
                continue
            asleep = sorted((state.host_names[i], i) for i in state.suspended_hosts
                            if state.cluster[i] == cluster)
            if asleep and not any(state.cluster[i] == cluster for i in state.wake_planned):
                state.plan_wake(asleep[0][1], explicit=True)
