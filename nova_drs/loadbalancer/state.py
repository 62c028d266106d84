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

"""Mutable working copy of a snapshot used while one plan is built.

Arrays indexed by host / instance number keep the hot loops cheap; every
change goes through :meth:`WorkingState.move`, which enforces the safety
invariants, so no algorithm can produce an unsafe plan however it is written.
"""

import heapq

from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import power

HISTORY_LENGTH = 30  # samples kept per instance, as CloudSim's PowerVm
#: Hosts being emptied: their servers still need a place on the active hosts.
EVACUATING = frozenset((model.SUSPENDING, model.ENTERING_MAINTENANCE))
#: Hosts (most spare CPU first) a leaving server is tried on before it is
#: left unreserved: keeps the reservation O(servers log hosts).
ARRIVAL_TRIES = 8


class WorkingState:
    def __init__(self, snapshot, limits=model.DEFAULT_LIMITS):
        self.now = snapshot.now
        self._history_cache = {}
        self.limits = limits
        hosts = snapshot.hosts
        self.host_names = [h.name for h in hosts]
        self.host_index = {h.name: i for i, h in enumerate(hosts)}
        self.cluster = [h.cluster for h in hosts]
        self.capacity = [float(h.mips) for h in hosts]
        self.pe_capacity = [float(h.pe_mips or h.mips / max(h.vcpus, 1)) for h in hosts]
        self.vcpu_capacity = [h.vcpus * h.cpu_allocation_ratio for h in hosts]
        self.ram_capacity = [h.ram_mb * h.ram_allocation_ratio for h in hosts]
        self.curve = [h.power_curve or power.GENERIC_LINEAR for h in hosts]
        self.power_state = [h.power_state for h in hosts]
        self.excluded = [h.excluded for h in hosts]
        self.suspendable = [h.suspendable for h in hosts]
        # CloudSim counts an empty host as off; a real one draws power until
        # suspended. Policies consolidate empty hosts too when this is set.
        self.idle_draws_power = False
        self.own_history = [h.cpu_history[:-HISTORY_LENGTH - 1:-1] for h in hosts]
        n_hosts = len(hosts)
        self.used_vcpus = [0.0] * n_hosts
        self.used_ram = [0.0] * n_hosts
        self.demand = [0.0] * n_hosts
        self.vms = [[] for _ in range(n_hosts)]
        self.pinned = [0] * n_hosts  # in-flight migrations touching the host
        self.wake_planned = set()
        self.explicit_wakes = set()
        self.suspend_planned = {}  # host -> None, keeps decision order
        self.active_per_cluster = {}
        for h in hosts:
            if h.power_state == model.ACTIVE:
                self.active_per_cluster[h.cluster] = self.active_per_cluster.get(h.cluster, 0) + 1

        self._load_instances(snapshot.instances)
        self._moving = self._load_migrations(snapshot.migrations)
        self.active_hosts = [i for i, st in enumerate(self.power_state) if st == model.ACTIVE]
        self.suspended_hosts = [i for i, st in enumerate(self.power_state)
                                if st == model.SUSPENDED]
        self.suspended_set = frozenset(self.suspended_hosts)
        self.waking_hosts = [i for i, st in enumerate(self.power_state) if st == model.WAKING]
        self.arrivals = self._reserve_evacuations()
        self.start_demand = list(self.demand)
        self.start_utilisation = [min(d / c, 1.0)
                                  for d, c in zip(self.demand, self.capacity, strict=True)]
        self.start_power = [power.power(cv, u)
                            for cv, u in zip(self.curve, self.start_utilisation, strict=True)]
        self.moves = []  # (vm, destination, reason), in decision order
        self._move_sources = []  # host each recorded move left
        self._detached_from = {}
        # The policy's own figures for this cycle (drs: sizes, predicted loads),
        # here, not on the policy, which thus serves concurrent cycles.
        self.cycle = None

    def _load_instances(self, insts):
        """Column arrays for all instances (bulk, as this is the hot path)."""
        host_index = self.host_index
        self.uuids = [v.uuid for v in insts]
        self.vm_index = {u: j for j, u in enumerate(self.uuids)}
        self.vm_vcpus = [v.vcpus for v in insts]
        self.vm_ram = [v.ram_mb for v in insts]
        self.vm_mips = [float(v.mips) for v in insts]
        self.vm_history = [v.cpu_history[:-HISTORY_LENGTH - 1:-1] for v in insts]
        self.vm_demand = [h[0] * m if h else 0.0
                          for h, m in zip(self.vm_history, self.vm_mips, strict=True)]
        self.vm_group = [v.server_group for v in insts]
        self.vm_group_policy = [v.group_policy for v in insts]
        self.vm_last_migrated = [v.last_migrated_at for v in insts]
        self.vm_left = [host_index.get(v.left_host) for v in insts]
        self.vm_host = [host_index[v.host] for v in insts]
        self.origin = list(self.vm_host)
        active = [st == model.ACTIVE for st in self.power_state]
        self.movable = [v.movable and v.state == 'active' and v.group_policy != model.AFFINITY
                        and active[i] for v, i in zip(insts, self.vm_host, strict=True)]
        self.anti_affinity = {}  # group -> {host: count}
        used_vcpus, used_ram, demand, vms = self.used_vcpus, self.used_ram, self.demand, self.vms
        for j, i in enumerate(self.vm_host):
            used_vcpus[i] += self.vm_vcpus[j]
            used_ram[i] += self.vm_ram[j]
            demand[i] += self.vm_demand[j]
            vms[i].append(j)
            group = self.vm_group[j]
            if group is not None:
                per_host = self.anti_affinity.setdefault(group, {})
                if self.vm_group_policy[j] == model.ANTI_AFFINITY:
                    per_host[i] = per_host.get(i, 0) + 1

    def _load_migrations(self, migrations):
        """Pin both ends of each migration under way, reserve the server at its
        destination; the set of servers moving."""
        moving = set()
        for mig in migrations:
            j = self.vm_index[mig.instance]
            moving.add(j)
            self.movable[j] = False
            dest = self.host_index[mig.destination]
            self.pinned[self.host_index[mig.source]] += 1
            self.pinned[dest] += 1
            if dest != self.vm_host[j]:
                self._reserve(j, dest)
        return moving

    def _reserve_evacuations(self):
        """Reserve, on the cluster's active hosts, the servers of hosts being
        emptied (suspending, entering maintenance); [(instance, host)].
        A server already moving (the snapshot's migrations: in flight, or
        about to go where the plan that started its host's suspend sent it)
        is reserved at its destination, not twice.

        Those servers are about to land on the active hosts (the host
        lifecycle moves them over the next cycles): a plan that ignored them
        would empty another host onto the capacity they are about to take,
        then find the survivors overloaded and wake hosts again. A host
        given arrivals is pinned as a migration's destination is (not emptied
        in this plan: they would have nowhere to go). Each goes,
        largest first, where the most CPU is spare and it fits, a cautious
        guess of where nova's scheduler will put it (a server that fits on
        none of the ARRIVAL_TRIES hosts with most spare CPU reserves nothing).
        One heap per cluster: O(servers log hosts).
        """
        leaving = [j for i, state in enumerate(self.power_state) if state in EVACUATING
                   for j in self.vms[i] if j not in self._moving]
        if not leaving:
            return []
        spare = {}
        for i in self.active_hosts:
            if not self.excluded[i]:
                spare.setdefault(self.cluster[i], []).append(
                    (self.demand[i] - self.capacity[i], i))
        for heap in spare.values():
            heapq.heapify(heap)
        arrivals = []
        for j in sorted(leaving, key=lambda j: (-self.vm_demand[j], j)):
            heap = spare.get(self.cluster[self.vm_host[j]])
            tried = []
            while heap and len(tried) < ARRIVAL_TRIES:
                _key, i = heapq.heappop(heap)
                tried.append(i)
                if self.fits(j, i):
                    self._reserve(j, i)
                    self.pinned[i] += 1
                    arrivals.append((j, i))
                    break
            for i in tried:
                heapq.heappush(heap, (self.demand[i] - self.capacity[i], i))
        return arrivals

    # -- bookkeeping -------------------------------------------------------
    def _append(self, inst, host):
        history = inst.cpu_history[:-HISTORY_LENGTH - 1:-1]
        self.vm_index[inst.uuid] = len(self.uuids)
        self.uuids.append(inst.uuid)
        self.vm_vcpus.append(inst.vcpus)
        self.vm_ram.append(inst.ram_mb)
        self.vm_mips.append(float(inst.mips))
        self.vm_history.append(history)
        self.vm_demand.append((history[0] if history else 0.0) * inst.mips)
        self.vm_group.append(inst.server_group)
        self.vm_group_policy.append(inst.group_policy)
        self.vm_last_migrated.append(inst.last_migrated_at)
        self.vm_left.append(self.host_index.get(inst.left_host))
        self.vm_host.append(host)
        self.origin.append(host)
        self.movable.append(inst.movable and inst.state == 'active'
                            and inst.group_policy != model.AFFINITY
                            and (host is None or self.power_state[host] == model.ACTIVE))

    def add_unplaced(self, inst):
        """Register a new instance (no host yet) for initial placement."""
        self._append(inst, None)
        j = len(self.uuids) - 1
        group = inst.server_group
        if group is not None and inst.group_policy == model.ANTI_AFFINITY:
            self.anti_affinity.setdefault(group, {})
        return j

    def _reserve(self, j, i):
        self.used_vcpus[i] += self.vm_vcpus[j]
        self.used_ram[i] += self.vm_ram[j]
        self.demand[i] += self.vm_demand[j]
        group = self.vm_group[j]
        if group is not None and self.vm_group_policy[j] == model.ANTI_AFFINITY:
            per_host = self.anti_affinity.setdefault(group, {})
            per_host[i] = per_host.get(i, 0) + 1

    def _release(self, j, i):
        self.used_vcpus[i] -= self.vm_vcpus[j]
        self.used_ram[i] -= self.vm_ram[j]
        self.demand[i] -= self.vm_demand[j]
        if self.demand[i] < 1e-9:
            self.demand[i] = 0.0
        group = self.vm_group[j]
        if group is not None and self.vm_group_policy[j] == model.ANTI_AFFINITY:
            self.anti_affinity[group][i] -= 1

    def _add(self, j, i):
        self._reserve(j, i)
        self.vms[i].append(j)
        self._history_cache.pop(i, None)

    def _remove(self, j, i):
        self._release(j, i)
        self.vms[i].remove(j)
        self._history_cache.pop(i, None)

    # -- queries -----------------------------------------------------------
    def is_usable(self, i):
        """Host may receive instances: active, or suspended with a wake planned."""
        return ((self.power_state[i] == model.ACTIVE or i in self.wake_planned)
                and i not in self.suspend_planned)

    def utilisation(self, i):
        return self.demand[i] / self.capacity[i]

    def history(self, i):
        """Host CPU fractions, newest first, derived from its instances'
        histories (they travel with the instances, as in CloudSim)."""
        cached = self._history_cache.get(i)
        if cached is not None:
            return cached
        sums = None
        for j in self.vms[i]:
            hist = self.vm_history[j]
            if not hist:
                continue
            weight = self.vm_mips[j]
            if sums is None:
                sums = [0.0] * HISTORY_LENGTH
            for k, value in enumerate(hist):
                sums[k] += value * weight
        if sums is None:
            result = self.own_history[i]
        else:
            cap = self.capacity[i]
            while sums and sums[-1] == 0:
                sums.pop()
            result = tuple(s / cap for s in sums)
        self._history_cache[i] = result
        return result

    def fits(self, j, i):
        """Hard constraints for putting instance j on host i."""
        if self.used_vcpus[i] + self.vm_vcpus[j] > self.vcpu_capacity[i] + 1e-9:
            return False
        if self.used_ram[i] + self.vm_ram[j] > self.ram_capacity[i] + 1e-9:
            return False
        need = self.vm_demand[j]
        if self.demand[i] + need > self.capacity[i] + 1e-9:
            return False
        if need / max(self.vm_vcpus[j], 1) > self.pe_capacity[i] + 1e-9:
            return False
        group = self.vm_group[j]
        if group is not None and self.vm_group_policy[j] == model.ANTI_AFFINITY:
            if self.anti_affinity[group].get(i, 0) > 0:
                return False
        return True

    def active_count(self, cluster):
        """Active hosts of the cluster once the planned wakes/suspends run."""
        return self.active_per_cluster.get(cluster, 0)

    def may_suspend(self, i):
        """Host could be emptied and suspended without breaking the floor."""
        return (self.power_state[i] == model.ACTIVE and not self.excluded[i]
                and self.suspendable[i]
                and not self.pinned[i] and i not in self.suspend_planned
                and all(self.movable[j] for j in self.vms[i])
                and self.active_count(self.cluster[i]) - 1 >= self.limits.floor)

    # -- changes -----------------------------------------------------------
    def detach(self, j):
        """Take instance j off its host while a destination is searched."""
        i = self.vm_host[j]
        self._remove(j, i)
        self.vm_host[j] = None
        self._detached_from[j] = i
        return i

    def attach(self, j, i, reason=None):
        """Put a detached instance on host i; records a move unless i is
        where it was at the start of the cycle and no reason is given."""
        if reason is not None and not (self.movable[j] and self.is_usable(i)
                                       and self.fits(j, i)):
            raise ValueError('unsafe move of %s to %s' % (self.uuids[j], self.host_names[i]))
        self._add(j, i)
        self.vm_host[j] = i
        if reason is not None:
            self.moves.append((j, i, reason))
            self._move_sources.append(self._detached_from[j])

    def promise(self, j, i):
        """Instance j goes to host i, which is waking, once it is up: its
        resources count there from now on, so the plan wakes no other host
        for the same load (the move itself comes in a later cycle)."""
        self._reserve(j, i)

    def plan_wake(self, i, explicit=False):
        """Wake host i; an implicit wake is dropped if nothing lands there."""
        if explicit:
            self.explicit_wakes.add(i)
        if self.power_state[i] != model.SUSPENDED:
            raise ValueError('can only wake a suspended host')
        if i not in self.wake_planned:
            self.wake_planned.add(i)
            cluster = self.cluster[i]
            self.active_per_cluster[cluster] = self.active_per_cluster.get(cluster, 0) + 1

    def plan_suspend(self, i):
        if self.vms[i] or not self.may_suspend(i):
            raise ValueError('host %s cannot be suspended' % self.host_names[i])
        self.suspend_planned[i] = None
        self.active_per_cluster[self.cluster[i]] -= 1

    def snapshot_journal(self):
        return len(self.moves), set(self.wake_planned)

    def rollback(self, journal):
        """Undo the moves recorded after ``journal``."""
        count, wakes = journal
        while len(self.moves) > count:
            j, i, _reason = self.moves.pop()
            previous = self._move_sources.pop()
            self._remove(j, i)
            self._add(j, previous)
            self.vm_host[j] = previous
        for i in self.wake_planned - wakes:
            self.active_per_cluster[self.cluster[i]] -= 1
        self.wake_planned = wakes

    def to_plan(self):
        """Wakes, then every recorded move in decision order (an instance
        moved twice in one cycle migrates twice, as CloudSim executes it),
        then suspends."""
        targets = {i for _j, i, _r in self.moves}
        actions = [model.Wake(self.host_names[i], model.Reason.CAPACITY.value)
                   for i in sorted(self.wake_planned)
                   if i in self.explicit_wakes or i in targets]
        location = list(self.origin)
        for j, i, reason in self.moves:
            if i != location[j]:
                actions.append(model.Migrate(self.uuids[j], self.host_names[location[j]],
                                             self.host_names[i], reason))
                location[j] = i
        for i in self.suspend_planned:
            if not self.vms[i]:
                actions.append(model.Suspend(self.host_names[i],
                                             model.Reason.UNDERLOAD.value))
        return model.Plan(tuple(actions))
