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

"""The shipped daemon's cycle at scale, in the closed-loop twin.

    .venv/bin/python benchmarks/twin_scale.py [--hosts 10000] [--per-host 10]
        [--max-ratio 3.0]

Runs the real nova-loadbalancer (observe, decide, act, record; its
openstacksdk client, the DRS database on SQLite) against the twin's nova and
placement for one 5-minute sample of synthetic load (five 60-s cycles) on
``--hosts`` hosts of the g5x4 model with ``--per-host`` servers each, and
prints, for the cold (first) cycle and the steady ones (their median): wall
seconds, nova/placement requests, DRS SQL statements, and the seconds the
decision core took in the same cycle. Exits 1 when the steady cycle's wall
time exceeds ``--max-ratio`` times the core's decision time (everything
around the decision must cost less than the decision itself, twice over),
or when an invariant was broken.
"""

import argparse
import sys
import time

from nova_drs.sim.twin import loop
from nova_drs.sim.twin import synthetic


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--hosts', type=int, default=10000)
    parser.add_argument('--per-host', type=int, default=10)
    parser.add_argument('--max-ratio', type=float, default=3.0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    names, data = synthetic.traces(args.hosts * args.per_host, 1, seed=5)
    result = loop.ClosedLoop(names, data, hosts=args.hosts, host_model='g5x4',
                             samples=1).run()
    print('%d hosts, %d servers, %d cycles in %.0f s; invariant violations: %d'
          % (args.hosts, len(names), result['cycles'], time.monotonic() - started,
             result['invariant_violations']))
    for name, cost in sorted(result['cycle_cost'].items()):
        print('%-6s cycle: wall %6.2f s, %7.1f requests, %5.1f statements; the core '
              'decided in %.2f s (%.2fx)' % (
                  name, cost['wall_seconds'], cost['requests'], cost['statements'],
                  cost['decision_seconds'],
                  cost['wall_seconds'] / max(cost['decision_seconds'], 1e-9)))
    steady = result['cycle_cost']['steady']
    ratio = steady['wall_seconds'] / max(steady['decision_seconds'], 1e-9)
    missed = []
    if ratio > args.max_ratio:
        missed.append('steady cycle %.2fx the decision time (target <= %.1fx)'
                      % (ratio, args.max_ratio))
    if result['invariant_violations']:
        missed.append('invariants broken: %s' % result['violations'])
    for line in missed:
        print('MISSED: ' + line)
    return 1 if missed else 0


if __name__ == '__main__':
    sys.exit(main())
