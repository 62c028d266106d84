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

"""Metering of the twin: the simulator's accumulator fed by constant-load
segments, and the virtual clock of the twin's database server."""

import datetime
import statistics

from oslo_utils import timeutils

from nova_drs.loadbalancer import power as power_model
from nova_drs.sim import metrics


def virtual_sqlite_clock(dbapi_connection, _record):
    """The twin's database server runs on virtual time too.

    Statistics are aged on the database server's clock (``created_at`` and the
    time of the read, ``db.statistics.server_utc_now``), which on SQLite is
    ``STRFTIME(format, 'now')``; an application function of the same name and
    arity overrides SQLite's built-in, so 'now' is ``timeutils.utcnow()``.
    Other values are parsed as SQLite's own time strings.
    """
    def strftime(fmt, value):
        if value is None or fmt is None:
            return None
        when = timeutils.utcnow() if value == 'now' else \
            datetime.datetime.fromisoformat(str(value))
        fraction = '%02d.%03d' % (when.second, when.microsecond // 1000)
        return when.strftime(fmt.replace('%f', fraction))
    dbapi_connection.create_function('strftime', 2, strftime, deterministic=False)


class TwinAccumulator(metrics.Accumulator):
    """The simulator's accumulator, fed by constant-load segments of the twin.

    Unlike the core-only model, where an empty host is off, a host draws
    power (idle power when empty) from its power-on command until it is
    down: emptying, waiting to suspend, shutting down and booting all cost.
    """

    def segment(self, loads, powered, seconds):
        energy = 0.0
        for i, ((allocated, requested), on) in enumerate(zip(loads, powered, strict=True)):
            if allocated > 0:
                energy += power_model.power(self.curves[i], allocated / self.caps[i]) * seconds
                self.active_time += seconds
                if allocated < requested * (1 - 1e-9):
                    self.violation_time += seconds
            elif on:
                idle = power_model.power(self.curves[i], 0.0) * seconds
                self.idle_on_ws += idle
                energy += idle
        self.energy_ws += energy
        self._sample_energy += energy

    def sample(self, loads, powered):
        """One point of the series every trace interval."""
        self.series['active_hosts'].append(sum(powered))
        self.series['overloaded_hosts'].append(
            sum(1 for alloc, req in loads if alloc < req * (1 - 1e-9)))
        self.series['energy_kwh'].append(self._sample_energy / 3.6e6)
        self.series['migrations'].append(self._step_migrations)
        loads_on = [alloc / cap for (alloc, _req), cap, on
                    in zip(loads, self.caps, powered, strict=True) if on]
        self.series['load_stddev'].append(statistics.pstdev(loads_on) if loads_on else 0.0)
        self._sample_energy = 0.0
        self._step_migrations = 0

    _sample_energy = 0.0
    #: Energy of hosts powered on with nothing on them (the core counts none).
    idle_on_ws = 0.0


def cycle_cost(costs):
    """Wall seconds, nova/placement requests, DRS SQL statements and the
    core's decision seconds of the first (cold) cycle and the median of the
    later (steady) ones; ``costs`` holds one such 4-tuple per cycle."""
    def named(cost):
        wall, requests, statements, decision = cost
        return {'wall_seconds': wall, 'requests': requests, 'statements': statements,
                'decision_seconds': decision}
    if not costs:
        return {}
    steady = costs[1:] or costs
    return {'cold': named(costs[0]),
            'steady': named([statistics.median(c[i] for c in steady) for i in range(4)])}
