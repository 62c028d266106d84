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

"""nova-drs's default policy: consolidate like PABFD, migrate far less.

Why each rule exists:

* **Prediction** - every instance is sized by an upper quantile of its
  recent CPU history, not by its last sample, so a host filled up to the
  placement target stays below capacity through ordinary fluctuations.
* **Hysteresis** - a host is relieved only above ``overload_*`` and emptied
  only below ``underload``, while destinations are filled only up to
  ``place_*``; a freshly packed host is thus neither overloaded nor
  underloaded on the next cycle.
* **Migration cost** - an overloaded host sheds the single smallest-RAM
  instance that is enough, else its largest ones; an underloaded host is
  emptied only if all its instances fit on hosts already on, hosts with
  fewest instances first (fewest migrations per host switched off).
* **No ping-pong** - instances moved within ``cooldown`` seconds (its last
  second included) are left alone; a host really over capacity sheds them
  only when nothing else can go, and never back to the host they left.
* **Power** - when a host must be woken, the one with the lowest peak watts
  per unit of capacity is chosen.
"""

import bisect
import itertools

from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import schema
from nova_drs.loadbalancer import state as state_mod

OVERLOAD = model.Reason.OVERLOAD.value
UNDERLOAD = model.Reason.UNDERLOAD.value
SCAN_LIMIT = 128
# Consecutive failed evacuations after which the cluster is taken as full:
# bounds the work of a cycle without changing what a roomy cluster gets.
GIVE_UP_AFTER = 32


def upper_quantile(history, window, quantile):
    """Upper quantile of the newest ``window`` samples (nearest rank)."""
    recent = sorted(history[:window])
    if not recent:
        return 0.0
    return recent[min(len(recent) - 1, int(quantile * len(recent)))]


@schema.algorithm
class DrsPolicy:
    """vSphere-DRS-like balancing and consolidation: servers sized by an upper
    quantile of their recent CPU, hot hosts relieved, cold hosts emptied and
    suspended, moves kept off recently moved servers.

    The object holds only its parameters; what one cycle computes (sizes,
    predicted loads, the host index) lives in a ``_Cycle`` kept on that
    cycle's working state, so one policy plans any number of clusters, from
    any number of threads.
    """

    # The [loadbalancer] options are generated from these (conf/decision.py);
    # a window stops at the samples a working state keeps of each server.
    PARAMETERS = schema.params(
        window=schema.integer(12, 'newest CPU samples each server is sized from', 'samples',
                              maximum=state_mod.HISTORY_LENGTH),
        quantile=schema.number(0.8, 'upper quantile of that window a server is sized by',
                               'quantile (0..1)', maximum=1.0),
        overload_now=schema.fraction(1.0, 'a host is relieved above this current CPU',
                                     minimum=0.1, maximum=2.0),
        overload_predicted=schema.fraction(1.1, 'a host is relieved above this predicted CPU',
                                           minimum=0.1, maximum=3.0),
        place_now=schema.fraction(0.9, 'destinations are filled up to this current CPU',
                                  minimum=0.1, maximum=1.0),
        place_predicted=schema.fraction(1.0, 'destinations are filled up to this predicted CPU',
                                        minimum=0.1, maximum=3.0),
        underload=schema.fraction(0.8, 'a host is emptied below this predicted CPU, when all '
                                       'its servers fit elsewhere'),
        cooldown=schema.number(3600.0, 'a server moved this recently stays unless its host '
                                       'is over capacity', 'seconds'))

    def _cooling(self, state, j):
        last = state.vm_last_migrated[j]
        return last is not None and state.now - last <= self.cooldown

    def place_new(self, state, j):
        """Place a new instance by best fit on its full size.

        Instances are placed one by one on one working state: the cycle
        built for the first one carries the loads on to the next ones.
        """
        cycle = state.cycle
        if cycle is None or cycle.policy is not self:
            cycle = state.cycle = _Cycle(self, state)
        cycle.size.append(state.vm_demand[j])
        dest = cycle.find_host(state, j, (), allow_wake=True)
        if dest is not None:
            cycle.attach(state, j, dest)
        return dest

    def decide(self, state, rng):
        state.cycle = _Cycle(self, state)
        state.cycle.decide(state)


class _Cycle:
    """One cycle of a DrsPolicy on one working state: each server's
    predicted size, each host's predicted load (``start_load`` as the cycle
    found it, which the findings report), the host index and the suspended
    hosts not yet woken."""

    def __init__(self, policy, state):
        self.policy = policy
        self.cooling = policy._cooling
        window, quantile = policy.window, policy.quantile
        self.size = [max(upper_quantile(h, window, quantile) * m, d)
                     for h, m, d in zip(state.vm_history, state.vm_mips, state.vm_demand,
                                        strict=True)]
        self.load = [0.0] * len(state.capacity)
        for j, i in enumerate(state.vm_host):
            if i is not None:
                self.load[i] += self.size[j]
        for j, i in state.arrivals:  # servers an emptied host is about to send there
            self.load[i] += self.size[j]
        self.start_load = list(self.load)
        self.index = _LoadIndex(self.load, self.size, policy.place_predicted, state)
        self.asleep = None  # sorted on the first wake

    def predicted(self, state, i):
        return self.load[i] / state.capacity[i]

    def attach(self, state, j, i, reason=None):
        state.attach(j, i, reason)
        self.load[i] += self.size[j]
        if i in self.index.key_of or reason is not None:
            self.index.update(state, i)

    def detach(self, state, j):
        i = state.detach(j)
        self.load[i] -= self.size[j]
        if i in self.index.key_of:
            self.index.update(state, i)
        return i

    def decide(self, state):
        overloaded = [i for i in state.active_hosts if self.is_overloaded(state, i)]
        excluded = set(overloaded)
        leaving = []
        for i in overloaded:
            leaving.extend((j, i) for j in self.shed(state, i))
            self.index.discard(i)
        leaving.sort(key=lambda pair: -self.size[pair[0]])
        for j, source in leaving:
            dest = self.find_host(state, j, excluded, allow_wake=True)
            if dest is None:
                self.attach(state, j, source)
            else:
                self.attach(state, j, dest, OVERLOAD)
        self.consolidate(state, excluded)

    def is_overloaded(self, state, i):
        policy = self.policy
        return (state.demand[i] > policy.overload_now * state.capacity[i]
                or self.load[i] > policy.overload_predicted * state.capacity[i])

    def accepts(self, state, j, i):
        """Host i can take instance j within both placement targets."""
        policy = self.policy
        cap = state.capacity[i]
        return (self.load[i] + self.size[j] <= policy.place_predicted * cap + 1e-9
                and state.demand[i] + state.vm_demand[j] <= policy.place_now * cap + 1e-9
                and state.fits(j, i))

    def _fits_targets(self, state, i):
        policy = self.policy
        cap = state.capacity[i]
        return (state.demand[i] <= policy.place_now * cap + 1e-9
                and self.load[i] <= policy.place_predicted * cap + 1e-9)

    def shed(self, state, i):
        """Detach the fewest instances that bring host i back to targets."""
        policy = self.policy
        gone = []
        hard = state.demand[i] > state.capacity[i]
        while not self._fits_targets(state, i):
            movable = [j for j in state.vms[i] if state.movable[j]]
            resting = [j for j in movable if not self.cooling(state, j)]
            # A server moved within the cooldown goes only when nothing else
            # can and the host is really short: else it is what ping-pongs.
            movable = resting or (movable if hard else [])
            if not movable:
                break
            cap = state.capacity[i]
            enough = [j for j in movable
                      if state.demand[i] - state.vm_demand[j] <= policy.place_now * cap
                      and self.load[i] - self.size[j] <= policy.place_predicted * cap]
            if enough:
                j = min(enough, key=lambda j: (state.vm_ram[j], self.size[j], j))
            else:
                j = max(movable, key=lambda j: (self.size[j], -j))
            self.detach(state, j)
            gone.append(j)
        return gone

    def find_host(self, state, j, excluded, allow_wake):
        left = state.vm_left[j]
        if left is not None and self.cooling(state, j):
            excluded = set(excluded) | {left}  # no ping-pong back to it
        dest = self.index.best_fit(state, j, excluded, self.accepts)
        if dest is None and allow_wake:
            dest = self._wake_for(state, j)
        return dest

    def _wake_for(self, state, j):
        """Wait for a host already waking that can take the instance, else wake
        the most efficient suspended host it fits on.

        A wake takes minutes and the daemon plans every minute: without the
        wait, each cycle of one overload woke one more host (the closed-loop
        twin saw three woken for one overload, suspended half an hour later).
        """
        left = state.vm_left[j] if self.cooling(state, j) else None
        for i in state.waking_hosts:
            if i != left and self.accepts(state, j, i):
                state.promise(j, i)
                self.load[i] += self.size[j]
                return None
        if self.asleep is None:
            self.asleep = sorted(state.suspended_hosts,
                                 key=lambda i: (_watts_per_capacity(state, i), i))
        for pos, i in enumerate(self.asleep):
            if i != left and self.accepts(state, j, i):
                del self.asleep[pos]
                state.plan_wake(i)
                self.index.update(state, i)
                return i
        return None

    def consolidate(self, state, overloaded):
        underload = self.policy.underload
        candidates = [i for i in state.active_hosts
                      if i not in overloaded and (state.vms[i] or state.idle_draws_power)
                      and self.load[i] < underload * state.capacity[i]]
        # Least efficient hosts first, then those freed by fewest migrations.
        candidates.sort(key=lambda i: (-_watts_per_capacity(state, i), len(state.vms[i]),
                                       self.predicted(state, i), i))
        receivers = set()
        failures = 0
        for i in candidates:
            if failures >= GIVE_UP_AFTER:
                break
            if i in receivers or not state.may_suspend(i):
                continue
            if any(self.cooling(state, j) for j in state.vms[i]):
                continue
            if not self.evacuate(state, i, receivers):
                failures += 1
                continue
            failures = 0
            state.plan_suspend(i)
            self.index.update(state, i)

    def evacuate(self, state, i, receivers):
        """Move all instances off host i, or none; True on success."""
        self.index.discard(i)
        journal = state.snapshot_journal()
        moved = []
        for j in sorted(state.vms[i], key=lambda j: -self.size[j]):
            self.detach(state, j)
            dest = self.index.best_fit(state, j, (), self.accepts)
            if dest is None:
                self.attach(state, j, i)
                break
            self.attach(state, j, dest, UNDERLOAD)
            moved.append((j, dest))
        else:
            receivers.update(dest for _j, dest in moved)
            return True
        for j, dest in moved:
            self.load[dest] -= self.size[j]
            self.load[i] += self.size[j]
        state.rollback(journal)
        for dest in {dest for _j, dest in moved} | {i}:
            self.index.update(state, dest)
        return False


class _LoadIndex:
    """Usable hosts sorted by predicted fill (load / (place_predicted *
    capacity), 1.0 = full), one sorted list per host kind (same CPU, core,
    vCPU and RAM capacity), for best fit in about O(kinds * log n).

    Hosts whose vCPUs or RAM cannot take even the smallest instance are
    left out, so they do not clog the scan.
    """

    def __init__(self, load, size, place_predicted, state):
        # The cycle's own lists, not the cycle: no reference loop to wait
        # for the garbage collector once the cycle is done.
        self.load, self.size, self.place = load, size, place_predicted
        self.kinds = {}      # kind -> sorted [(fill, -watts per capacity, host)]
        self.kind_of = {}
        self.key_of = {}
        self.smallest_vcpus = min(state.vm_vcpus, default=0)
        self.smallest_ram = min(state.vm_ram, default=0)
        for i in state.active_hosts:
            self.update(state, i)

    def _kind(self, state, i):
        kind = self.kind_of.get(i)
        if kind is None:
            kind = (state.capacity[i], state.pe_capacity[i], state.vcpu_capacity[i],
                    state.ram_capacity[i])
            self.kind_of[i] = kind
        return kind

    def discard(self, i):
        old = self.key_of.pop(i, None)
        if old is not None:
            keys = self.kinds[self.kind_of[i]]
            del keys[bisect.bisect_left(keys, old)]

    def update(self, state, i):
        self.discard(i)
        full = (state.used_vcpus[i] + self.smallest_vcpus > state.vcpu_capacity[i]
                or state.used_ram[i] + self.smallest_ram > state.ram_capacity[i])
        if state.is_usable(i) and not full:
            fill = self.load[i] / (self.place * state.capacity[i])
            # Among equally filled hosts the scan meets the most efficient first.
            key = (fill, -_watts_per_capacity(state, i), i)
            self.key_of[i] = key
            bisect.insort(self.kinds.setdefault(self._kind(state, i), []), key)

    def best_fit(self, state, j, excluded, accepts):
        """Fullest host ``accepts`` (state, j, i) takes: within both placement
        targets.

        Per kind only the ``SCAN_LIMIT`` fullest hosts with enough predicted
        room and the ``SCAN_LIMIT`` emptiest ones are examined, so a cycle
        stays near-linear even when many instances fit nowhere.
        """
        place = self.place
        size = self.size[j]
        per_core = state.vm_demand[j] / max(state.vm_vcpus[j], 1)
        best = None
        for (cap, pe, _vcpus, _ram), keys in self.kinds.items():
            if per_core > pe or size > place * cap:
                continue
            top = bisect.bisect_right(keys, (1.0 - size / (place * cap) + 1e-9,
                                             0.0, len(state.capacity)))
            window = itertools.chain(range(top - 1, max(top - 1 - SCAN_LIMIT, -1), -1),
                                     range(0, min(SCAN_LIMIT, top - SCAN_LIMIT)))
            for k in window:
                key = keys[k]
                if best is not None and key <= best:
                    break
                i = key[2]
                if i not in excluded and accepts(state, j, i):
                    best = key
                    break
        return None if best is None else best[2]


def _watts_per_capacity(state, i):
    """Peak power per unit of CPU capacity: lower is more efficient."""
    return state.curve[i][10] / state.capacity[i]
