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

"""Safety invariants of every plan, over random snapshots (hypothesis)."""

import dataclasses

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from nova_drs.loadbalancer import power

POLICIES = ('drs', 'even_distribution', 'thr_mmt_0.8', 'lr_mmt_1.2', 'mad_rs_2.5', 'iqr_mu_1.5',
            'lrr_mc_1.2')
STATES = (model.ACTIVE,) * 4 + (model.SUSPENDED,) * 2 + (
    model.SUSPENDING, model.WAKING, model.ERROR)
EPS = 1e-6


@st.composite
def snapshots(draw):
    n_hosts = draw(st.integers(1, 7))
    hosts = []
    for k in range(n_hosts):
        vcpus = draw(st.integers(1, 8))
        mips = draw(st.sampled_from((1000.0, 2000.0, 3720.0)))
        hosts.append(model.Host(
            name='h%d' % k, vcpus=vcpus, ram_mb=draw(st.sampled_from((2048, 4096, 8192))),
            mips=mips, pe_mips=mips / vcpus, cluster=draw(st.sampled_from(('a', 'b'))),
            cpu_allocation_ratio=draw(st.sampled_from((1.0, 4.0, 16.0))),
            ram_allocation_ratio=draw(st.sampled_from((1.0, 1.5))),
            power_state=draw(st.sampled_from(STATES)),
            excluded=draw(st.booleans()),
            power_curve=draw(st.sampled_from((power.HP_ML110_G4, power.HP_ML110_G5, None)))))
    instances = []
    for k in range(draw(st.integers(0, 14))):
        group = draw(st.sampled_from((None, None, 'g1', 'g2')))
        instances.append(model.Instance(
            uuid='v%d' % k, host='h%d' % draw(st.integers(0, n_hosts - 1)),
            vcpus=draw(st.integers(1, 2)), ram_mb=draw(st.sampled_from((256, 512, 1024))),
            mips=draw(st.sampled_from((100.0, 500.0, 1000.0))),
            cpu_history=tuple(draw(st.lists(st.floats(0, 1), max_size=14))),
            state=draw(st.sampled_from(('active', 'active', 'active', 'paused'))),
            server_group=group,
            group_policy=None if group is None else (
                model.ANTI_AFFINITY if group == 'g1' else model.AFFINITY),
            last_migrated_at=draw(st.sampled_from((None, None, 0.0, 5000.0))),
            movable=draw(st.sampled_from((True, True, True, False)))))
    migrations = []
    for inst in instances[:draw(st.integers(0, 2))]:
        migrations.append(model.InFlightMigration(
            inst.uuid, inst.host, 'h%d' % draw(st.integers(0, n_hosts - 1))))
    return model.Snapshot(tuple(hosts), tuple(instances), tuple(migrations), now=6000.0)


def check_invariants(snap, plan, limits):
    hosts = {h.name: h for h in snap.hosts}
    state = {h.name: h.power_state for h in snap.hosts}
    where = {i.uuid: i.host for i in snap.instances}
    by_uuid = {i.uuid: i for i in snap.instances}
    in_flight = {m.instance: m for m in snap.migrations}
    assert len(plan.actions) <= 2 * len(snap.instances) + 2 * len(snap.hosts)

    def usage(name):
        members = [i for i in snap.instances if where[i.uuid] == name]
        members += [by_uuid[m.instance] for m in snap.migrations
                    if m.destination == name and where[m.instance] != name]
        demand = sum(i.cpu_history[-1] * i.mips for i in members if i.cpu_history)
        return (sum(i.vcpus for i in members), sum(i.ram_mb for i in members), demand, members)

    seen_migrate = seen_suspend = False
    for action in plan.actions:
        if isinstance(action, model.Wake):
            assert not (seen_migrate or seen_suspend), 'wakes come first'
            assert state[action.host] == model.SUSPENDED
            state[action.host] = model.ACTIVE
        elif isinstance(action, model.Migrate):
            assert not seen_suspend, 'suspends come last'
            seen_migrate = True
            inst = by_uuid[action.instance]
            assert inst.uuid not in in_flight
            assert inst.state == 'active' and inst.group_policy != model.AFFINITY
            assert inst.movable, 'an opted-out server never moves'
            assert where[inst.uuid] == action.source
            assert state[action.source] == model.ACTIVE
            assert state[action.destination] == model.ACTIVE
            where[inst.uuid] = action.destination
            vcpus, ram, demand, members = usage(action.destination)
            dest = hosts[action.destination]
            assert vcpus <= dest.vcpus * dest.cpu_allocation_ratio + EPS
            assert ram <= dest.ram_mb * dest.ram_allocation_ratio + EPS
            assert demand <= dest.mips + EPS
            if inst.group_policy == model.ANTI_AFFINITY:
                assert sum(1 for m in members if m.server_group == inst.server_group) == 1
        else:
            seen_suspend = True
            name = action.host
            assert state[name] == model.ACTIVE and not hosts[name].excluded
            assert not usage(name)[3], 'every instance of a suspended host has moved'
            assert all(i.movable for i in snap.instances if i.host == name), \
                'a host holding an opted-out server is never suspended'
            assert all(name not in (m.source, m.destination) for m in snap.migrations)
            state[name] = model.SUSPENDED
    for cluster in {h.cluster for h in snap.hosts}:
        before = sum(1 for h in snap.hosts
                     if h.cluster == cluster and h.power_state == model.ACTIVE)
        after = sum(1 for h in snap.hosts if h.cluster == cluster and state[h.name] ==
                    model.ACTIVE)
        assert after >= min(before, limits.floor)
    return where


def applied(snap, plan, where):
    """The snapshot after the plan ran (moved instances stamped now)."""
    moved = {m.instance for m in plan.migrations}
    woken = {w.host for w in plan.wakes}
    asleep = {s.host for s in plan.suspends}
    hosts = tuple(dataclasses.replace(
        h, power_state=model.ACTIVE if h.name in woken else
        model.SUSPENDED if h.name in asleep else h.power_state) for h in snap.hosts)
    instances = tuple(dataclasses.replace(
        i, host=where[i.uuid], last_migrated_at=snap.now if i.uuid in moved
        else i.last_migrated_at) for i in snap.instances)
    return model.Snapshot(hosts, instances, snap.migrations, snap.now)


@settings(max_examples=150, deadline=None)
@given(snapshots(), st.sampled_from(POLICIES), st.integers(0, 2), st.integers(0, 1))
def test_every_plan_is_safe(snap, name, minimum, reserve):
    limits = model.SafetyLimits(minimum, reserve)
    plan = planner.plan(snap, catalog.by_name(name), limits, seed=3)
    check_invariants(snap, plan, limits)
    assert plan == planner.plan(snap, catalog.by_name(name), limits, seed=3)


@settings(max_examples=150, deadline=None)
@given(snapshots(), st.integers(0, 2))
def test_drs_replanning_never_reverses_a_move(snap, minimum):
    limits = model.SafetyLimits(minimum, 0)
    first = planner.plan(snap, catalog.by_name('drs'), limits)
    where = check_invariants(snap, first, limits)
    after = applied(snap, first, where)
    second = planner.plan(after, catalog.by_name('drs'), limits)
    check_invariants(after, second, limits)
    moved = {m.instance for m in first.migrations}
    assert not moved & {m.instance for m in second.migrations}
