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

"""Time one full decision cycle on synthetic clusters (10 instances/host).

    .venv/bin/python benchmarks/decision_speed.py [--sizes 1000,5000,10000]
        [--policy drs] [--history 12] [--repeat 3] [--no-explain]

Prints the best-of-N wall time of planner.plan (validation + state + policy
+ plan, with the findings that explain it unless --no-explain) and the
peak memory traced by tracemalloc during one cycle.

The garbage collector stays on, as in the daemon, but the snapshot is
frozen out of it (gc.freeze()) while it is measured: the figures are the
cycle's own allocations, not full scans of the benchmark's input heap,
whose size depends on how the benchmark built it.
"""

import argparse
import gc
import random
import time
import tracemalloc

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from nova_drs.loadbalancer import power


def synthetic_snapshot(n_hosts, per_host=10, history=12, seed=42):
    """Hosts of 32 vCPUs x 2.6 GHz with ten 4-vCPU instances; each host
    draws a load level (6 % to 106 % of capacity at the mean) so that about
    one host in six is over capacity and half are lightly used; n_hosts / 10
    more hosts are suspended (they can be woken)."""
    rng = random.Random(seed)
    hosts, instances = [], []
    for h in range(n_hosts + n_hosts // 10):
        asleep = h >= n_hosts
        hosts.append(model.Host(name='host-%05d' % h, vcpus=32, ram_mb=262144,
                                mips=32 * 2600.0, pe_mips=2600.0, cluster='c%d' % (h % 4),
                                cpu_allocation_ratio=4.0, ram_allocation_ratio=1.0,
                                power_state=model.SUSPENDED if asleep else model.ACTIVE,
                                power_curve=power.HP_ML110_G5))
        if asleep:
            continue
        level = rng.choice((0.05, 0.1, 0.2, 0.4, 0.6, 0.85))
        for v in range(per_host):
            base = min(1.0, max(0.0, rng.gauss(level, 0.15)))
            samples = tuple(min(1.0, max(0.0, base + rng.gauss(0, 0.1))) for _ in range(history))
            instances.append(model.Instance(uuid='vm-%05d-%02d' % (h, v), host='host-%05d' % h,
                                            vcpus=4, ram_mb=16384, mips=4 * 2600.0,
                                            cpu_history=samples))
    return model.Snapshot(tuple(hosts), tuple(instances), now=1e6)


def measure(snapshot, policy, repeat, explain=True):
    """Best of ``repeat`` untraced cycles (the machine may be shared), then
    one cycle under tracemalloc for its peak memory; the heap built so far
    (the snapshot) is frozen out of the collector meanwhile."""
    gc.collect()
    gc.freeze()
    try:
        best = float('inf')
        for _ in range(repeat):
            started = time.perf_counter()
            plan = planner.plan(snapshot, policy, explain=explain)
            best = min(best, time.perf_counter() - started)
        tracemalloc.start()
        planner.plan(snapshot, policy, explain=explain)
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        gc.unfreeze()
    return best, peak, plan


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', default='1000,5000,10000')
    parser.add_argument('--policy', default='drs')
    parser.add_argument('--history', type=int, default=12)
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--no-explain', dest='explain', action='store_false',
                        help='plan without findings (as the simulator does)')
    args = parser.parse_args()
    print('%8s %9s %10s %9s %11s %8s %6s' % ('hosts', 'instances', 'cycle s', 'peak MiB',
                                            'migrations', 'suspends', 'wakes'))
    for size in (int(s) for s in args.sizes.split(',')):
        snapshot = synthetic_snapshot(size, history=args.history)
        seconds, peak, plan = measure(snapshot, catalog.by_name(args.policy), args.repeat,
                                       args.explain)
        print('%8d %9d %10.3f %9.1f %11d %8d %6d' % (
            size, len(snapshot.instances), seconds, peak / 2 ** 20, len(plan.migrations),
            len(plan.suspends), len(plan.wakes)))


if __name__ == '__main__':
    main()
