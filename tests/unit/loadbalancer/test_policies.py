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

"""End-to-end cycles of the CloudSim composition, the seed rule and drs."""

import dataclasses

from nova_drs import loadbalancer_plugins
from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import overload
from nova_drs.loadbalancer import placement
from nova_drs.loadbalancer import planner
from nova_drs.loadbalancer import policy
from nova_drs.loadbalancer import selection
from tests.unit.loadbalancer import fakes

LIMITS = model.SafetyLimits(1, 0)


def three_hosts(states=(model.ACTIVE, model.ACTIVE, model.SUSPENDED)):
    return [fakes.host('h%d' % k, mips=1000.0, power_state=s) for k, s in enumerate(states)]


def test_thr_relieves_overload_on_the_cheapest_host_even_if_asleep():
    instances = [fakes.vm('a', 'h0', demand=0.6, mips=1000.0, ram_mb=2048),
                 fakes.vm('b', 'h0', demand=1.0, mips=300.0, ram_mb=512),   # h0 at 90 %
                 fakes.vm('c', 'h1', demand=0.5, mips=200.0)]               # h1 at 10 %
    plan = planner.plan(fakes.snapshot(three_hosts(), instances),
                        catalog.by_name('thr_mmt_0.8'), LIMITS)
    # MMT sheds b (least RAM): h0 drops to 60 %.  PABFD prices b on h1
    # (10->40 %: 110-97 = 13 W) above waking h2 (0->30 %: 105-93.7 = 11.3 W),
    # as CloudSim does; h1 is not emptied since h0 is overloaded and h2 was off.
    assert plan.actions == (model.Wake('h2', 'capacity'),
                            model.Migrate('b', 'h0', 'h2', 'overload'))


def test_underload_host_is_emptied_then_suspended():
    instances = [fakes.vm('a', 'h0', demand=0.5, mips=1000.0),
                 fakes.vm('c', 'h1', demand=0.5, mips=200.0)]
    plan = planner.plan(fakes.snapshot(three_hosts(), instances),
                        catalog.by_name('thr_mmt_0.8'), LIMITS)
    assert [(m.instance, m.destination) for m in plan.migrations] == [('c', 'h0')]
    assert [s.host for s in plan.suspends] == ['h1']
    assert plan.actions[-1] == plan.suspends[0]


def test_floor_of_active_hosts_blocks_suspend():
    instances = [fakes.vm('a', 'h0', demand=0.5, mips=1000.0),
                 fakes.vm('c', 'h1', demand=0.5, mips=200.0)]
    plan = planner.plan(fakes.snapshot(three_hosts(), instances),
                        catalog.by_name('thr_mmt_0.8'), model.SafetyLimits(1, 1))
    assert plan.actions == ()


def test_seed_rule_wakes_first_suspended_host_when_cluster_is_hot():
    hosts = three_hosts((model.ACTIVE, model.SUSPENDED, model.SUSPENDED))
    instances = [fakes.vm('a', 'h0', demand=0.95, mips=1000.0)]
    detector = overload.StaticThreshold(0.9)
    seed = policy.ConsolidationPolicy(detector, selection.MinimumMigrationTime(),
                                      placement.PowerAwareBestFit(detector),
                                      loadbalancer_plugins.build('underload', 'mean_threshold',
                                                                 {'memory': 0.0}),
                                      loadbalancer_plugins.build('rule', 'unsuspend_when_hot'))
    plan = planner.plan(fakes.snapshot(hosts, instances), seed, LIMITS)
    # the only VM cannot move anywhere useful, but the cluster is hot
    assert [w.host for w in plan.wakes] == ['h1']


def test_drs_sheds_one_instance_that_is_enough():
    instances = [fakes.vm('a', 'h0', demand=0.6, mips=1000.0, ram_mb=4096),
                 fakes.vm('b', 'h0', demand=0.5, mips=600.0, ram_mb=512),
                 fakes.vm('c', 'h0', demand=0.75, mips=200.0, ram_mb=1024),  # h0 at 105 %
                 fakes.vm('d', 'h1', demand=0.5, mips=1000.0)]
    plan = planner.plan(fakes.snapshot(three_hosts(), instances), catalog.by_name('drs'), LIMITS)
    # Either b (300 MIPS) or c (150) alone brings h0 under the 90 % target;
    # b has less RAM, so it migrates fastest.  h1 takes it (50 -> 80 %).
    assert [(m.instance, m.destination, m.reason) for m in plan.migrations] == [
        ('b', 'h1', 'overload')]


def test_drs_leaves_recently_migrated_instances_alone():
    instances = [fakes.vm('a', 'h0', demand=0.6, mips=1000.0),
                 fakes.vm('c', 'h1', demand=0.5, mips=200.0, last_migrated_at=900.0)]
    snap = fakes.snapshot(three_hosts(), instances, now=1000.0)
    assert planner.plan(snap, catalog.by_name('drs'), LIMITS).actions == ()
    # "within the cooldown" includes its last second (the ping-pong window does)
    boundary = fakes.snapshot(three_hosts(), instances, now=900.0 + 3600.0)
    assert planner.plan(boundary, catalog.by_name('drs'), LIMITS).actions == ()
    later = fakes.snapshot(three_hosts(), instances, now=900.0 + 3601.0)
    assert len(planner.plan(later, catalog.by_name('drs'), LIMITS).suspends) == 1


def test_drs_hard_overload_sheds_a_resting_instance_before_a_cooling_one():
    instances = [fakes.vm('a', 'h0', demand=0.6, mips=1000.0, ram_mb=4096),
                 fakes.vm('b', 'h0', demand=1.0, mips=300.0, ram_mb=512,
                          last_migrated_at=900.0, left_host='h1'),
                 fakes.vm('c', 'h0', demand=1.0, mips=300.0, ram_mb=1024)]   # 120 %
    plan = planner.plan(fakes.snapshot(three_hosts(), instances, now=1000.0),
                        catalog.by_name('drs'), LIMITS)
    # b (least RAM) would be enough, but it just arrived: c goes instead.
    assert [(m.instance, m.reason) for m in plan.migrations] == [('c', 'overload')]


def test_drs_never_sends_a_cooling_instance_back_to_the_host_it_left():
    hosts = [fakes.host('h0', mips=1000.0), fakes.host('h1', mips=1000.0),
             fakes.host('h2', mips=1000.0)]
    instances = [fakes.vm('a', 'h0', demand=0.7, mips=1000.0, server_group='g',
                          group_policy=model.AFFINITY),              # never moves
                 fakes.vm('b', 'h0', demand=1.0, mips=400.0,
                          last_migrated_at=900.0, left_host='h1'),   # h0 at 110 %
                 fakes.vm('x', 'h1', demand=0.5, mips=1000.0),       # h1: best fit for b
                 fakes.vm('y', 'h2', demand=0.2, mips=1000.0)]
    snap = fakes.snapshot(hosts, instances, now=1000.0)
    plan = planner.plan(snap, catalog.by_name('drs'), model.SafetyLimits(3, 0))
    assert [(m.instance, m.destination) for m in plan.migrations] == [('b', 'h2')]
    rested = fakes.snapshot(hosts, [dataclasses.replace(i, last_migrated_at=None)
                                    for i in instances], now=1000.0)
    plan = planner.plan(rested, catalog.by_name('drs'), model.SafetyLimits(3, 0))
    assert [(m.instance, m.destination) for m in plan.migrations][:1] == [('b', 'h1')]


def test_drs_wakes_the_most_efficient_host_when_nothing_fits():
    hosts = [fakes.host('h0', mips=1000.0),
             fakes.host('g4', mips=1000.0, power_state=model.SUSPENDED,
                        power_curve=tuple(w * 2 for w in fakes.power.HP_ML110_G4)),
             fakes.host('g5', mips=1000.0, power_state=model.SUSPENDED)]
    instances = [fakes.vm('a', 'h0', demand=0.7, mips=1000.0),
                 fakes.vm('b', 'h0', demand=0.5, mips=800.0)]   # 110 %
    plan = planner.plan(fakes.snapshot(hosts, instances), catalog.by_name('drs'), LIMITS)
    assert [w.host for w in plan.wakes] == ['g5']
    assert plan.actions[0] == plan.wakes[0]
    assert plan.migrations[0].destination == 'g5'
