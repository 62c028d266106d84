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

"""even_distribution: hot hosts shed servers to the least loaded ones, nothing sleeps."""

import pytest

from nova_drs import loadbalancer_plugins
from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes

HOT = (0.95, 0.95, 0.95)


def cluster(hot_history=HOT, hot_count=4, ram_mb=512, others=((), ())):
    """host a: ``hot_count`` busy servers; hosts b and c: the given servers."""
    hosts = [fakes.host(name) for name in ('a', 'b', 'c')]
    servers = [fakes.vm('a%d' % k, 'a', mips=250.0, ram_mb=ram_mb, history=hot_history)
               for k in range(hot_count)]
    for name, loads in zip(('b', 'c'), others, strict=True):
        servers += [fakes.vm('%s%d' % (name, k), name, mips=250.0, history=(load,))
                    for k, load in enumerate(loads)]
    return fakes.snapshot(hosts, servers)


def test_hot_host_sheds_to_least_loaded_hosts_and_nothing_is_suspended():
    plan = planner.plan(cluster(others=((0.2,), ())), even.EvenDistributionPolicy(),
                        fakes.NO_FLOOR, suspend_idle=False)
    assert not plan.suspends and not plan.wakes
    moves = plan.migrations
    assert {m.source for m in moves} == {'a'}
    # 4 x 237.5 MIPS on a, 50 on b, 0 on c: one server to c, one to b
    # brings a to 47.5 % (mean 34 %, tolerance 10 %): two moves, not more.
    assert sorted(m.destination for m in moves) == ['b', 'c']
    assert all(m.reason == model.Reason.OVERLOAD.value for m in moves)


def test_short_peak_is_not_balanced():
    snap = cluster(hot_history=(0.1, 0.1, 0.95))  # oldest first: hot only now
    assert planner.plan(snap, even.EvenDistributionPolicy(window=2), fakes.NO_FLOOR).actions == ()
    assert planner.plan(snap, _even(window=1), fakes.NO_FLOOR).migrations


def test_memory_counts_as_load():
    # CPU idle, but 4 x 1900 MB of 8192 MB is 93 % RAM: the host sheds.
    snap = cluster(hot_history=(0.01,) * 3, ram_mb=1900)
    plan = planner.plan(snap, even.EvenDistributionPolicy(), fakes.NO_FLOOR)
    assert plan.migrations and {m.source for m in plan.migrations} == {'a'}


def test_no_move_when_it_would_not_lower_the_peak():
    # b and c are as hot as a: moving anything only shifts the peak.
    snap = cluster(others=((0.95,) * 4, (0.95,) * 4))
    assert planner.plan(snap, even.EvenDistributionPolicy(), fakes.NO_FLOOR).actions == ()


def test_max_migrations_bounds_a_cycle_and_cooldown_holds_servers():
    snap = cluster()
    assert planner.plan(snap, _even(max_migrations=1),
                        fakes.NO_FLOOR).migrations.__len__() == 1
    moved = [s if s.host != 'a' else model.Instance(**{**_fields(s), 'last_migrated_at': 0.0})
             for s in snap.instances]
    cooling = model.Snapshot(snap.hosts, tuple(moved), now=60.0)
    assert planner.plan(cooling, _even(cooldown=3600),
                        fakes.NO_FLOOR).actions == ()


def _even(**overrides):
    return loadbalancer_plugins.build('policy', 'even_distribution', overrides)


def _fields(instance):
    return {name: getattr(instance, name) for name in instance.__dataclass_fields__}


def test_catalog_and_bad_parameters():
    assert isinstance(loadbalancer_plugins.by_name('even_distribution', {'high': 0.5}),
                      even.EvenDistributionPolicy)
    with pytest.raises(ValueError, match='bad even_distribution parameter'):
        loadbalancer_plugins.by_name('even_distribution', {'nope': 1})
    with pytest.raises(ValueError, match='only accepted by the drs and even_distribution'):
        loadbalancer_plugins.by_name('thr_mmt_0.8', {'window': 1})
    assert isinstance(catalog.by_name('even_distribution'), even.EvenDistributionPolicy)
    with pytest.raises(ValueError):
        even.EvenDistributionPolicy(high=0)
