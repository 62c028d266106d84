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

"""Trace-driven replay of a day through the decision core.

Time model (CloudSim's PowerDatacenter): every ``interval`` seconds the
hosts' demand is sampled, the policy plans, and migrations start; each
migration takes RAM / (bandwidth / 2).  The state before the first
migration ends is kept for the shortest migration time of that step, then
the new placement holds until the next step.  A host whose utilisation is
zero draws no power (it is off); otherwise power is integrated linearly
between the utilisations at both ends of each sub-interval.
"""

import contextlib
import gc
import time

from nova_drs import exception
from nova_drs import loadbalancer_plugins
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import placement
from nova_drs.loadbalancer import planner
from nova_drs.sim import datacenter
from nova_drs.sim import metrics
from nova_drs.sim import oscillation

# CloudSim's null RAM/bandwidth utilisation model: after creation, VMs
# reserve neither RAM nor vCPUs, only their CPU demand is checked.
UNBOUNDED_RATIO = 1.0e6


# 'policy': the policy's own rule (dvfs: first fit); 'first_fit': nova's
# fill-in-order packing for every policy, so runs share one placement.
INITIAL_PLACEMENTS = ('policy', 'first_fit')


@contextlib.contextmanager
def frozen_heap():
    """Keep the objects that exist now (the day's traces, the scenario) out
    of the garbage collector while a replay runs: every step allocates a
    snapshot's worth of objects, and the full collections that triggers
    would rescan them all each time. Scoped to the replay; the decision
    core leaves the collector alone. A heap the process froze itself stays
    frozen."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class Simulation:
    def __init__(self, names, traces, policy_name, hosts=datacenter.DEFAULT_HOSTS,
                 host_model='cloudsim', seed=0, interval=datacenter.INTERVAL,
                 retire_idle=True, params=None, ping_pong_window=oscillation.DEFAULT_WINDOW,
                 initial='policy'):
        if initial not in INITIAL_PLACEMENTS:
            raise ValueError('unknown initial placement %r (choose from %s)'
                             % (initial, ', '.join(INITIAL_PLACEMENTS)))
        self.names = names
        self.traces = traces
        self.policy_name = policy_name
        self.policy = (None if policy_name == 'dvfs'
                       else loadbalancer_plugins.by_name(policy_name, params))
        self.initial = initial
        # dvfs and policies that never suspend keep every host on: an empty
        # host is then a destination and part of the load spread.
        self.hosts_stay_on = self.policy is None or not getattr(self.policy, 'suspends', True)
        self.seed = seed
        self.interval = interval
        self.models = datacenter.host_models(hosts, host_model)
        self.host_names = ['host-%04d' % i for i in range(hosts)]
        self.capacity = [m.pes * m.pe_mips for m in self.models]
        self.vm_types = datacenter.vm_types(len(traces))
        self.migration_time = [datacenter.migration_seconds(ram, self.models[0].bandwidth_mbit)
                               for _mips, ram in self.vm_types]
        self._host_objects = {}
        self.retire_idle = retire_idle
        self.retired = 0
        self.ping_pong = oscillation.PingPongCounter(ping_pong_window)
        self.left_host = [None] * len(traces)   # the host each VM left at its last move

    def _host(self, i, state, ratio=UNBOUNDED_RATIO):
        key = (i, state, ratio)
        obj = self._host_objects.get(key)
        if obj is None:
            m = self.models[i]
            obj = model.Host(name=self.host_names[i], vcpus=m.pes, ram_mb=m.ram_mb,
                             mips=m.pes * m.pe_mips, pe_mips=m.pe_mips,
                             cpu_allocation_ratio=UNBOUNDED_RATIO, ram_allocation_ratio=ratio,
                             power_state=state, power_curve=m.curve)
            self._host_objects[key] = obj
        return obj

    def initial_placement(self):
        """CloudSim creates every VM at full MIPS and RAM, in file order."""
        hosts = [self._host(i, model.ACTIVE, ratio=1.0) for i in range(len(self.models))]
        insts = [model.Instance(uuid=name, host='', vcpus=1, ram_mb=ram, mips=mips,
                                cpu_history=(1.0,))
                 for name, (mips, ram) in zip(self.names, self.vm_types, strict=True)]
        # dvfs (no consolidation) places by first fit, as CloudSim's runner.
        policy = self.policy if self.policy and self.initial == 'policy' else placement.FirstFit()
        result = planner.initial_placement(hosts, insts, policy)
        index = {n: i for i, n in enumerate(self.host_names)}
        where = []
        for name in self.names:
            if result[name] is None:
                raise exception.SimulationError('VM %s fits on no host; add hosts (--hosts)'
                                                % name)
            where.append(index[result[name]])
        return where

    def run(self, progress=None):
        with frozen_heap():
            return self._replay(progress)

    def _replay(self, progress):
        started = time.perf_counter()
        traces, caps = self.traces, self.capacity
        n_vms, n_hosts = len(traces), len(caps)
        samples = len(traces[0])
        vm_mips = [mips for mips, _ram in self.vm_types]
        host_of = self.initial_placement()
        last_moved = [None] * n_vms
        self.left_host = [None] * n_vms
        acc = metrics.Accumulator(n_hosts, n_vms, [m.curve for m in self.models], caps)
        index = {n: i for i, n in enumerate(self.host_names)}
        vm_index = {n: v for v, n in enumerate(self.names)}
        host_hours = {}     # (host, clock hour) -> migrations in or out
        for k in range(samples):
            now = k * self.interval
            following = k + 1 if k + 1 < samples else k
            if k >= 1 and self.retire_idle:
                self._retire(host_of, k, following)
            demand = [traces[v][k] * vm_mips[v] if host_of[v] is not None else 0.0
                      for v in range(n_vms)]
            before = list(host_of)
            moves = []
            if k >= 1 and self.policy is not None:
                snapshot = self._snapshot(k, host_of, last_moved)
                plan = planner.plan(snapshot, self.policy, model.SafetyLimits(0, 0),
                                    seed=self.seed + k, explain=False)
                for action in plan.migrations:
                    v = vm_index[action.instance]
                    self.ping_pong.moved(v, action.source, action.destination, now)
                    for end in (action.source, action.destination):
                        hour = (end, int(now // 3600))
                        host_hours[hour] = host_hours.get(hour, 0) + 1
                    host_of[v] = index[action.destination]
                    last_moved[v] = now
                    self.left_host[v] = action.source
                    moves.append(v)
            nxt = self._host_load(host_of, [traces[v][following] * vm_mips[v]
                                            if host_of[v] is not None else 0.0
                                            for v in range(n_vms)])
            phases = self._phases(before, host_of, demand, moves)
            for v in moves:
                acc.migration(v, demand[v] * 0.1 * self.migration_time[v])
            powered = None
            if not self.hosts_stay_on:
                occupied = set(host_of)
                powered = [i in occupied for i in range(n_hosts)]
            acc.step(phases, nxt, self.interval, powered)
            for v in range(n_vms):
                acc.requested(v, demand[v] * self.interval)
            if progress is not None:
                progress(k + 1, samples)
        result = acc.summary()
        result.update(policy=self.policy_name, initial=self.initial, vms=n_vms, hosts=n_hosts,
                      retired_vms=self.retired, ping_pong=self.ping_pong.count,
                      peak_host_hour_migrations=max(host_hours.values(), default=0),
                      runtime_s=round(time.perf_counter() - started, 2))
        return result

    def _snapshot(self, k, host_of, last_moved):
        occupied = set(host_of)
        present = [v for v in range(len(self.traces)) if host_of[v] is not None]
        hosts = tuple(self._host(i, model.ACTIVE if self.hosts_stay_on or i in occupied
                                 else model.SUSPENDED)
                      for i in range(len(self.models)))
        start = max(0, k + 1 - 30)
        instances = tuple(
            model.Instance(uuid=self.names[v], host=self.host_names[host_of[v]], vcpus=1,
                           ram_mb=self.vm_types[v][1], mips=self.vm_types[v][0],
                           cpu_history=tuple(self.traces[v][start:k + 1]),
                           last_migrated_at=last_moved[v], left_host=self.left_host[v])
            for v in present)
        return model.Snapshot(hosts, instances, now=k * self.interval)

    def _retire(self, host_of, k, following):
        """CloudSim removes a VM for good once it requests no CPU at an
        update (its utilisation, interpolated 0.1 s after the sample, is 0)."""
        for v, trace in enumerate(self.traces):
            if host_of[v] is not None and trace[k] == 0 and trace[following] == 0:
                host_of[v] = None
                self.retired += 1

    def _phases(self, before, after, demand, moves):
        """[(start second, load)] within one interval.

        Host states change when the step starts and when migrations
        complete.  A VM being migrated runs on its source at 90 % (counted
        at 100 % for power) while its destination reserves 10 % of its
        demand although the VM requests all of it (CloudSim's model).
        """
        phases = [(0.0, self._host_load(before, demand, moves, after))]
        for done in sorted({self.migration_time[v] for v in moves}):
            placement = list(before)
            migrating = []
            for v in moves:
                if self.migration_time[v] <= done:
                    placement[v] = after[v]
                else:
                    migrating.append(v)
            phases.append((done, self._host_load(placement, demand, migrating, after)))
        return phases

    def _host_load(self, host_of, demand, migrating=(), after=None):
        """(allocated, requested) MIPS per host: a one-vCPU VM gets at most
        one core of its host, and a host at most its capacity."""
        n_hosts = len(self.capacity)
        allocated, requested = [0.0] * n_hosts, [0.0] * n_hosts
        pe = [m.pe_mips for m in self.models]
        for v, i in enumerate(host_of):
            if i is None:
                continue
            d = demand[v]
            requested[i] += d
            allocated[i] += d if d <= pe[i] else pe[i]
        for v in migrating:
            i = after[v]
            requested[i] += demand[v]
            allocated[i] += 0.1 * demand[v]
        return [(min(a, c), r)
                for a, r, c in zip(allocated, requested, self.capacity, strict=True)]
