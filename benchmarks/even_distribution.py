"""Even distribution in the simulator: host-load spread against no balancing.

    .venv/bin/python benchmarks/even_distribution.py [--day 20110303] [--traces DIR]

Replays one PlanetLab day (CloudSim's 800-host data centre) and prints, per
run, the daily mean of the population standard deviation of host CPU load,
its change against each no-balancing baseline, and migrations per host per
hour.  Baselines: ``dvfs`` (CloudSim's first fit, no migration) and
``spread only`` (even_distribution's least-loaded placement with migrations
off).  Target (issue 13): spread -50 % or better with <= 1 migration per
host per hour; the last line says whether the default run meets it.
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
RUNS = (
    ('dvfs (first fit, no migration)', 'dvfs', None),
    ('spread only (no migration)', 'even_distribution', {'max_migrations': 0}),
    ('even_distribution (defaults)', 'even_distribution', None),
    ('even_distribution high=0.3 window=1', 'even_distribution',
     {'high': 0.3, 'window': 1, 'tolerance': 0.05}),
    ('even_distribution high=0.1 tolerance=0', 'even_distribution',
     {'high': 0.1, 'window': 1, 'tolerance': 0.0}),
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--day', default='20110303')
    parser.add_argument('--traces', default=os.path.join(SHARED, 'traces', 'planetlab'))
    args = parser.parse_args()
    names, data = traces.load_directory(os.path.join(args.traces, args.day))
    results = []
    for label, policy, params in RUNS:
        result = engine.Simulation(names, data, policy, params=params).run()
        hours = len(data[0]) * result.get('interval', 300) / 3600.0
        results.append((label, result['mean_load_stddev'], result['migrations'],
                        result['migrations'] / result['hosts'] / hours, result['slatah']))
    baselines = {'dvfs': results[0][1], 'spread': results[1][1]}
    print('day %s, %d VMs, 800 hosts' % (args.day, len(names)))
    print('%-40s %12s %9s %9s %10s %12s' % ('run', 'stddev %', 'vs dvfs', 'vs spread',
                                             'migrations', 'mig/host/h'))
    for label, stddev, migrations, rate, _slatah in results:
        print('%-40s %12.2f %+8.1f%% %+8.1f%% %10d %12.3f' % (
            label, stddev * 100, 100 * (stddev / baselines['dvfs'] - 1),
            100 * (stddev / baselines['spread'] - 1), migrations, rate))
    default = results[2]
    reduction = 1 - default[1] / baselines['dvfs']
    met = reduction >= 0.5 and default[3] <= 1.0
    print('target (>= 50 %% lower than dvfs, <= 1 migration/host/h): %s '
          '(%.1f %% lower, %.3f migrations/host/h)'
          % ('MET' if met else 'NOT MET', 100 * reduction, default[3]))
    return 0 if met else 1


if __name__ == '__main__':
    raise SystemExit(main())
