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

"""Even distribution in the simulator: host-load spread against no balancing.

    .venv/bin/python benchmarks/even_distribution.py [--day 20110303] [--traces DIR]

Replays one PlanetLab day on two clusters and prints, per run, the daily
mean of the population standard deviation of host CPU load (over the hosts
that are on: even_distribution never suspends, so every host), its change
against no balancing, and migrations per host per hour.

* ``cloudsim-800``: CloudSim's 800 ML110 G4/G5 hosts, VMs retired once idle
  (as CloudSim): ~1.3 VMs per host at the start, ~0.65 by the evening.
* ``real-200``: the same capacity on 200 hosts of 8 cores / 16 GB (4 x G5),
  idle VMs kept as nova keeps idle servers: 5.3 VMs per host, inside the
  4:1-8:1 of real clusters.  The target is judged here: a balancer can only
  even hosts that hold several servers.

Every run of a cluster starts from the same placement, nova's fill-in-order
packing (first fit); "no balancing" is that placement with no migration.
``peak h-h`` is the busiest host-hour (migrations in or out of one host in
one clock hour), printed for information.  Target (issue 13): spread -50 %
or better with <= 1 migration per host per hour (the mean rate) for the
judged run; the last line says whether it is met, exit 1 if not.
"""

import argparse
import os

from nova_drs.sim import engine
from nova_drs.sim import traces

HERE = os.path.dirname(os.path.abspath(__file__))
# The shared traces sit beside the lead's checkout or beside the worktrees.
SHARED = next((p for p in (os.path.join(HERE, '..', '..', 'shared'),
                           os.path.join(HERE, '..', '..', '..', 'shared'))
               if os.path.isdir(p)), os.path.join(HERE, '..', '..', 'shared'))
# (name, hosts, host model, retire idle VMs)
CLUSTERS = (('cloudsim-800', 800, 'cloudsim', True), ('real-200', 200, 'g5x4', False))
NO_BALANCING = 'no balancing'
# Aggregate metadata high_utilization=10, overcommit_duration=5 (one 5-min
# sample), balance_tolerance=0: the operator's setting for a low-load cluster
# (the defaults act only above 80 %, which no host reaches on these days).
OPERATOR = 'high 10 %, window 1, tolerance 0'
RUNS = (
    (NO_BALANCING, {'max_migrations': 0}),
    ('defaults (high 80 %, window 2, tol. 10 %)', None),
    ('high 10 %, window 2, tolerance 2 %', {'high': 0.1, 'window': 2, 'tolerance': 0.02}),
    (OPERATOR, {'high': 0.1, 'window': 1, 'tolerance': 0.0}),
)
JUDGED = ('real-200', OPERATOR)


def run_cluster(names, data, hosts, host_model, retire_idle):
    """[(label, stddev, migrations, migrations per host per hour, busiest
    host-hour: migrations in or out of one host in one clock hour)]."""
    rows = []
    for label, params in RUNS:
        result = engine.Simulation(names, data, 'even_distribution', hosts=hosts,
                                   host_model=host_model, params=params,
                                   retire_idle=retire_idle, initial='first_fit').run()
        hours = len(data[0]) * result.get('interval', 300) / 3600.0
        rows.append((label, result['mean_load_stddev'], result['migrations'],
                     result['migrations'] / hosts / hours, result['peak_host_hour_migrations']))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--day', default='20110303')
    parser.add_argument('--traces', default=os.path.join(SHARED, 'traces', 'planetlab'))
    args = parser.parse_args()
    names, data = traces.load_directory(os.path.join(args.traces, args.day))
    print('day %s, %d VMs' % (args.day, len(names)))
    print('%-13s %-42s %9s %9s %10s %11s %10s' % ('cluster', 'run', 'stddev %', 'vs none',
                                                 'migrations', 'mig/host/h', 'peak h-h'))
    judged = None
    for cluster, hosts, host_model, retire_idle in CLUSTERS:
        rows = run_cluster(names, data, hosts, host_model, retire_idle)
        baseline = rows[0][1]
        for label, stddev, migrations, rate, peak in rows:
            change = stddev / baseline - 1 if baseline else 0.0
            print('%-13s %-42s %9.2f %+8.1f%% %10d %11.3f %10d' % (
                cluster, label, stddev * 100, 100 * change, migrations, rate, peak))
            if (cluster, label) == JUDGED:
                judged = (-change, rate)
    reduction, rate = judged
    met = reduction >= 0.5 and rate <= 1.0
    print('target on %s, %s (>= 50 %% lower than no balancing, <= 1 migration/host/h): '
          '%s (%.1f %% lower, %.3f migrations/host/h)'
          % (JUDGED[0], JUDGED[1], 'MET' if met else 'NOT MET', 100 * reduction, rate))
    return 0 if met else 1


if __name__ == '__main__':
    raise SystemExit(main())
