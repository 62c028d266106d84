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

"""The core keeps no state between calls: one policy object serves several
clusters at once, and planning leaves the process's garbage collector be."""

import gc
import random
import sys
import threading
from unittest import mock

from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import findings
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes


def cluster(seed, n_hosts=24):
    """Hosts from idle to over capacity, a few asleep, some servers moved
    recently (cooling down): every branch of the drs policy has work."""
    rng = random.Random(seed)
    hosts, vms = [], []
    for h in range(n_hosts):
        name = 'c%d-h%02d' % (seed, h)
        asleep = h >= n_hosts - 4
        hosts.append(fakes.host(name, power_state=model.SUSPENDED if asleep else model.ACTIVE))
        if asleep:
            continue
        level = rng.choice((0.05, 0.2, 0.5, 0.9, 1.3))
        for v in range(rng.randint(1, 6)):
            history = [min(1.0, max(0.0, rng.gauss(level, 0.1))) for _ in range(12)]
            moved = 900.0 if rng.random() < 0.15 else None
            vms.append(fakes.vm('%s-v%d' % (name, v), name, history=history,
                                ram_mb=rng.choice((512, 1024)), last_migrated_at=moved))
    return fakes.snapshot(hosts, vms, now=1800.0)


SNAPSHOTS = (cluster(1), cluster(2))


def plans(policy, snapshots=SNAPSHOTS):
    return [planner.plan(s, policy, fakes.NO_FLOOR, suspend_idle=True) for s in snapshots]


def test_shared_policy_interleaved_cycles_plan_as_separate_objects():
    alone = [plans(drs.DrsPolicy(), [s])[0] for s in SNAPSHOTS]
    assert all(p.migrations and p.findings for p in alone)
    shared = drs.DrsPolicy()
    states = [fakes.working(s.hosts, s.instances) for s in SNAPSHOTS]
    for working in states:   # both cycles decided before either is explained
        working.idle_draws_power = True
        shared.decide(working, random.Random(0))
    for working, snapshot, expected in zip(states, SNAPSHOTS, alone, strict=True):
        planner._suspend_idle_hosts(working)
        result = working.to_plan()
        got = model.Plan(result.actions, findings.collect(working, shared, result))
        assert got == expected, snapshot.hosts[0].name


def test_shared_policy_plans_from_two_threads_as_separate_objects():
    for policy in (drs.DrsPolicy(), even.EvenDistributionPolicy()):
        expected = plans(type(policy)())
        results, barrier = {}, threading.Barrier(2)

        def run(k, policy=policy, barrier=barrier, results=results):
            barrier.wait()
            results[k] = [plans(policy, [SNAPSHOTS[k]])[0] for _ in range(5)]

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)   # switch threads as often as possible
        try:
            threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            sys.setswitchinterval(interval)
        assert results[0] == [expected[0]] * 5
        assert results[1] == [expected[1]] * 5


def test_shared_policy_places_on_two_clusters_interleaved():
    def new(seed):
        return [model.Instance(uuid='new-%d-%d' % (seed, k), host='', vcpus=1,
                               ram_mb=512, mips=100.0 + 37.0 * k, cpu_history=(1.0,))
                for k in range(30)]

    separate = [planner.initial_placement(s.hosts, new(n), drs.DrsPolicy())
                for n, s in enumerate(SNAPSHOTS)]
    shared = drs.DrsPolicy()
    states = [fakes.working(s.hosts, ()) for s in SNAPSHOTS]
    placed = [{}, {}]
    for k in range(30):
        for n, working in enumerate(states):
            inst = new(n)[k]
            dest = shared.place_new(working, working.add_unplaced(inst))
            placed[n][inst.uuid] = None if dest is None else working.host_names[dest]
    assert placed == separate


def test_plan_leaves_the_garbage_collector_alone():
    was = gc.isenabled()
    forbidden = mock.Mock(side_effect=AssertionError('the core switched the collector'))
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            with mock.patch.object(gc, 'disable', forbidden), \
                    mock.patch.object(gc, 'enable', forbidden), \
                    mock.patch.object(gc, 'freeze', forbidden):
                plans(drs.DrsPolicy())
                assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
