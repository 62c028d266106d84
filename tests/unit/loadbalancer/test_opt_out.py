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

"""Instance.movable False (per-server opt-out): never moved, its host never suspended."""

import dataclasses

import pytest

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes

CONSOLIDATING = ('drs', 'thr_mmt_0.8', 'lr_mmt_1.2', 'mad_rs_2.5')


def _pinned(snap, uuid):
    return dataclasses.replace(snap, instances=tuple(
        dataclasses.replace(i, movable=False) if i.uuid == uuid else i
        for i in snap.instances))


def _idle_pair():
    """Host a: one idle server; host b: two busier ones. a is the suspend candidate."""
    hosts = [fakes.host('a'), fakes.host('b')]
    servers = [fakes.vm('a0', 'a', demand=0.05),
               fakes.vm('b0', 'b', demand=0.2), fakes.vm('b1', 'b', demand=0.2)]
    return fakes.snapshot(hosts, servers)


@pytest.mark.parametrize('name', CONSOLIDATING)
def test_host_holding_an_unmovable_server_is_not_emptied_nor_suspended(name):
    free = planner.plan(_idle_pair(), catalog.by_name(name), fakes.NO_FLOOR,
                        suspend_idle=True)
    assert [s.host for s in free.suspends] == ['a']  # the test can fail
    plan = planner.plan(_pinned(_idle_pair(), 'a0'), catalog.by_name(name), fakes.NO_FLOOR,
                        suspend_idle=True)
    assert 'a0' not in {m.instance for m in plan.migrations}
    assert 'a' not in {s.host for s in plan.suspends}


@pytest.mark.parametrize('name', CONSOLIDATING + ('even_distribution',))
def test_overloaded_host_sheds_only_movable_servers(name):
    hosts = [fakes.host('a'), fakes.host('b')]
    servers = [fakes.vm('a%d' % k, 'a', mips=250.0, history=(0.97,) * 3) for k in range(5)]
    snap = fakes.snapshot(hosts, servers)
    policy = catalog.by_name(name)
    moved = {m.instance for m in planner.plan(snap, policy, fakes.NO_FLOOR).migrations}
    assert moved  # the test can fail
    for uuid in moved:
        snap = _pinned(snap, uuid)
    still = planner.plan(snap, catalog.by_name(name), fakes.NO_FLOOR).migrations
    assert not moved & {m.instance for m in still}


def test_even_distribution_leaves_an_all_pinned_hot_host_alone():
    hosts = [fakes.host('a'), fakes.host('b')]
    servers = [fakes.vm('a%d' % k, 'a', mips=250.0, history=(0.97,) * 3, movable=False)
               for k in range(4)]
    plan = planner.plan(fakes.snapshot(hosts, servers), even.EvenDistributionPolicy(),
                        fakes.NO_FLOOR)
    assert plan.actions == ()
