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

"""Even distribution: move servers off hot hosts to the least loaded ones.

oVirt's evenly_distributed balancer (and CloudStack's ``balanced``): a host
whose load stayed above ``high`` for ``window`` samples sheds servers to
the least loaded hosts of its cluster until its load is within
``tolerance`` of the cluster's mean. Never suspends, never wakes.

* **Both resources count** - a host's load is the higher of its CPU use
  and its RAM use, so a host short of memory (oVirt's
  MaxFreeMemoryForOverUtilized) sheds too, and a destination must stay
  below ``high`` on both (MinFreeMemoryForUnderUtilized).
* **Fewest migrations** - each move is the single server that brings the
  source and its destination closest to each other, and a move happens only
  if it lowers the higher of the two loads.
* **No ping-pong** - servers moved within ``cooldown`` seconds stay.
"""

import heapq

from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import schema

OVERLOAD = model.Reason.OVERLOAD.value
# Destinations tried per move before the source is given up for this cycle:
# bounds a cycle's work when the servers of a hot host fit almost nowhere.
SCAN_LIMIT = 64
# oVirt's defaults: HighUtilization 80 %, CpuOverCommitDurationMinutes 2.
DEFAULT_HIGH = 0.8
DEFAULT_DURATION_MINUTES = 2
DEFAULT_TOLERANCE = 0.1


@schema.algorithm
class EvenDistributionPolicy:
    """oVirt-like even distribution: a host above ``high`` CPU (or RAM) for
    ``window`` samples sheds servers to the least loaded hosts; nothing is
    suspended.
    """

    PARAMETERS = schema.params(
        high=schema.fraction(DEFAULT_HIGH, 'a host above this CPU (for window samples) or RAM '
                                           'sheds servers'),
        window=schema.integer(2, 'samples the CPU must stay above high', 'samples'),
        tolerance=schema.fraction(DEFAULT_TOLERANCE, 'a host within this of the cluster '
                                                     'mean is left alone'),
        cooldown=schema.number(3600.0, 'a server moved this recently stays', 'seconds'),
        max_migrations=schema.integer(None, 'migrations one cycle may plan (none: no cap)',
                                      'migrations', minimum=0, nullable=True))

    #: Hosts stay on: an empty host is a destination, never suspended.
    suspends = False

    def __post_init__(self):
        if not 0 < self.high <= 1 or self.window < 1 or not 0 <= self.tolerance <= 1:
            raise ValueError('need 0 < high <= 1, window >= 1, 0 <= tolerance <= 1')

    # -- figures -----------------------------------------------------------
    @staticmethod
    def cpu(state, i):
        return state.demand[i] / state.capacity[i]

    @staticmethod
    def ram(state, i):
        return state.used_ram[i] / state.ram_capacity[i] if state.ram_capacity[i] else 1.0

    def load(self, state, i):
        return max(self.cpu(state, i), self.ram(state, i))

    def _sustained(self, state, i):
        """CPU above ``high`` for the last ``window`` samples, or RAM above now."""
        if self.ram(state, i) > self.high:
            return True
        recent = state.history(i)[:self.window]
        return (len(recent) >= self.window and min(recent) > self.high
                and self.cpu(state, i) > self.high)

    def _cooling(self, state, j):
        last = state.vm_last_migrated[j]
        return last is not None and state.now - last < self.cooldown

    # -- placement of new servers -------------------------------------------
    def place_new(self, state, j):
        """Least loaded usable host the server fits on (the weigher's rule)."""
        best = None
        for i in state.active_hosts:
            if state.is_usable(i) and not state.excluded[i] and state.fits(j, i):
                key = (self.load(state, i), i)
                if best is None or key < best:
                    best = key
        if best is None:
            return None
        state.attach(j, best[1])
        return best[1]

    # -- cycle ---------------------------------------------------------------
    def decide(self, state, rng):
        budget = self.max_migrations if self.max_migrations is not None else len(state.vm_host)
        by_cluster = {}
        for i in state.active_hosts:
            if state.is_usable(i) and not state.excluded[i]:
                by_cluster.setdefault(state.cluster[i], []).append(i)
        for cluster in sorted(by_cluster):
            budget -= self._balance(state, by_cluster[cluster], budget)

    def _balance(self, state, hosts, budget):
        """Relieve the cluster's hot hosts, hottest first; returns moves made."""
        mean = sum(self.load(state, i) for i in hosts) / len(hosts)
        goal = mean + self.tolerance
        hot = sorted((i for i in hosts if self._sustained(state, i)),
                     key=lambda i: (-self.load(state, i), i))
        if not hot:
            return 0
        sources = set(hot)
        # Destinations: least loaded first; a heap re-keyed as loads change.
        heap = [(self.load(state, i), i) for i in hosts if i not in sources]
        heapq.heapify(heap)
        moves = 0
        for source in hot:
            while moves < budget and self.load(state, source) > goal:
                if not self._shed_one(state, source, heap):
                    break
                moves += 1
        return moves

    def _shed_one(self, state, source, heap):
        """Move the one server that best evens source and the least loaded
        host able to take one; False when no move lowers the peak."""
        before = self.load(state, source)
        candidates = [j for j in state.vms[source]
                      if state.movable[j] and not self._cooling(state, j)]
        skipped = []
        moved = False
        while heap and not moved and len(skipped) < SCAN_LIMIT:
            dest_load, dest = heapq.heappop(heap)
            if dest_load != self.load(state, dest):
                heapq.heappush(heap, (self.load(state, dest), dest))
                continue
            if dest_load >= before:
                heapq.heappush(heap, (dest_load, dest))
                break
            best = None
            for j in candidates:
                if not state.fits(j, dest):
                    continue
                src_after, dest_after = self._loads_after(state, j, source, dest)
                peak = max(src_after, dest_after)
                if peak < before - 1e-9 and dest_after <= self.high and (
                        best is None or (peak, state.vm_ram[j], j) < best):
                    best = (peak, state.vm_ram[j], j)
            if best is None:
                skipped.append((dest_load, dest))
                continue
            j = best[2]
            state.detach(j)
            state.attach(j, dest, OVERLOAD)
            heapq.heappush(heap, (self.load(state, dest), dest))
            moved = True
        for item in skipped:
            heapq.heappush(heap, item)
        return moved

    @staticmethod
    def _loads_after(state, j, source, dest):
        cpu = state.vm_demand[j]
        ram = state.vm_ram[j]
        src = max((state.demand[source] - cpu) / state.capacity[source],
                  (state.used_ram[source] - ram) / state.ram_capacity[source]
                  if state.ram_capacity[source] else 1.0)
        dst = max((state.demand[dest] + cpu) / state.capacity[dest],
                  (state.used_ram[dest] + ram) / state.ram_capacity[dest]
                  if state.ram_capacity[dest] else 1.0)
        return src, dst
