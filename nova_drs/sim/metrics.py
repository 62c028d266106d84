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

"""CloudSim's metrics (examples/power/Helper.java):

* energy: per host, linear interpolation of power between successive
  utilisations, zero while the host starts an interval idle (switched off);
* SLATAH: share of active host time during which a host got less CPU than
  its VMs requested (demand above capacity);
* PDM: mean over VMs of the CPU lost to migrations (10 % of demand while
  migrating) divided by the CPU requested;
* SLAV = SLATAH x PDM, ESV = energy x SLAV, host shutdowns = active -> idle
  transitions; sleeps under an hour (ours, the twin's word for flapping): an
  idle spell that ended, the host active again, less than SHORT_SLEEP after
  it began;
* load spread (ours, for load balancing): population standard deviation of
  the CPU utilisation (allocated / capacity) of the hosts that are on after
  each step, averaged over the day; a switched-off host has no load to even.
"""

import statistics

from nova_drs.loadbalancer import power

#: An idle spell shorter than this (seconds) is a sleep under an hour.
SHORT_SLEEP = 3600.0


class Accumulator:
    def __init__(self, n_hosts, n_vms, curves, capacities):
        self.curves = curves
        self.caps = capacities
        self.energy_ws = 0.0
        self.active_time = 0.0
        self.violation_time = 0.0
        self.shutdowns = 0
        self.was_active = [False] * n_hosts
        self.idle_since = [None] * n_hosts   # seconds into the run a host went idle
        self.short_sleeps = 0
        self.clock = 0.0                     # seconds into the run at the step's start
        self._at = 0.0                       # ... at the phase being metered
        self.lost = [0.0] * n_vms
        self.asked = [0.0] * n_vms
        self.migrations = 0
        self.series = {'active_hosts': [], 'energy_kwh': [], 'overloaded_hosts': [],
                       'migrations': [], 'load_stddev': []}
        self._step_migrations = 0

    def _interval(self, i, load_from, load_to, seconds):
        """Loads are (allocated, requested) MIPS at both ends."""
        cap = self.caps[i]
        start = load_from[0] / cap
        energy = 0.0
        if start > 0:
            curve = self.curves[i]
            energy = (power.power(curve, start) + power.power(curve, load_to[0] / cap)) / 2
            energy *= seconds
            self.active_time += seconds
            if load_from[0] < load_from[1] * (1 - 1e-9):
                self.violation_time += seconds
        active = start > 0
        if self.was_active[i] and not active:
            self.shutdowns += 1
            self.idle_since[i] = self._at
        elif active and not self.was_active[i] and self.idle_since[i] is not None:
            if self._at - self.idle_since[i] < SHORT_SLEEP:
                self.short_sleeps += 1
            self.idle_since[i] = None
        self.was_active[i] = active
        return energy

    def step(self, phases, following, interval, powered=None):
        """One interval: ``phases`` are (start second, load per host); the
        load reached at the end of the interval is ``following``; ``powered``
        (default: every host) flags the hosts on after the step."""
        energy = 0.0
        ends = [start for start, _load in phases[1:]] + [interval]
        targets = [load for _start, load in phases[1:]] + [following]
        for (start, load), end, target in zip(phases, ends, targets, strict=True):
            if end > start:
                self._at = self.clock + start
                for i in range(len(load)):
                    energy += self._interval(i, load[i], target[i], end - start)
        post = phases[-1][1]
        active = sum(1 for alloc, _req in post if alloc > 0)
        overloaded = sum(1 for alloc, req in post if alloc < req * (1 - 1e-9))
        self.energy_ws += energy
        self.series['active_hosts'].append(active)
        self.series['overloaded_hosts'].append(overloaded)
        self.series['energy_kwh'].append(energy / 3.6e6)
        self.series['migrations'].append(self._step_migrations)
        loads = [alloc / cap for (alloc, _req), cap in zip(post, self.caps, strict=True)]
        if powered is not None:
            loads = [load for load, on in zip(loads, powered, strict=True) if on]
        self.series['load_stddev'].append(statistics.pstdev(loads) if loads else 0.0)
        self._step_migrations = 0
        self.clock += interval

    def migration(self, v, lost_mips_seconds):
        self.migrations += 1
        self._step_migrations += 1
        self.lost[v] += lost_mips_seconds

    def requested(self, v, mips_seconds):
        self.asked[v] += mips_seconds

    def summary(self):
        per_vm = [lost / asked
                  for lost, asked in zip(self.lost, self.asked, strict=True) if asked > 0]
        pdm = sum(per_vm) / len(per_vm) if per_vm else 0.0
        slatah = self.violation_time / self.active_time if self.active_time else 0.0
        energy = self.energy_ws / 3.6e6
        return {
            'energy_kwh': energy,
            'migrations': self.migrations,
            'slatah': slatah,
            'pdm': pdm,
            'slav': slatah * pdm,
            'esv': energy * slatah * pdm,
            'host_shutdowns': self.shutdowns,
            'sleeps_under_an_hour': self.short_sleeps,
            'mean_active_hosts': (sum(self.series['active_hosts'])
                                  / max(len(self.series['active_hosts']), 1)),
            'peak_active_hosts': max(self.series['active_hosts'], default=0),
            'mean_load_stddev': statistics.fmean(self.series['load_stddev'] or [0.0]),
            'series': self.series,
        }
