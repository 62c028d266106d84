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

"""The orchestrator on a real (SQLite) DRS database, nova replaced by a recorder:
stored plans progress per action, acting is O(actions), suspends respect the
locked floor."""


import datetime
import types

import pytest
import sqlalchemy as sa

from nova_drs import exception
from nova_drs.daemon import orchestrator
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import plan_progress
from nova_drs.db import plans
from nova_drs.loadbalancer import model

LIMITS = {'per_host': 2, 'per_destination': 2, 'per_cluster': 10,
          'suspends_per_cycle': 5, 'wakes_per_cycle': 5}


class RecordingNova:
    """Counts what nova is asked; refuses the instances in ``refuse``."""

    def __init__(self, refuse=(), crash_on=None):
        self.sent = []
        self.refuse = set(refuse)
        self.crash_on = crash_on

    def live_migrate(self, instance, destination):
        if instance == self.crash_on:
            raise RuntimeError('connection to the DRS database lost')
        if instance in self.refuse:
            raise exception.NovaRequestFailed('No valid host was found', 400)
        self.sent.append(instance)

    cold_migrate = live_migrate


def _view(hosts, servers):
    """What execute reads of a cycle's View: the snapshot's hosts and nova's servers."""
    return types.SimpleNamespace(
        snapshot=types.SimpleNamespace(hosts=tuple(
            model.Host(name, 16, 32768, 16000.0, cluster='c1') for name in hosts)),
        servers={uuid: {'OS-EXT-SRV-ATTR:host': host, 'status': 'ACTIVE', 'metadata': {},
                        'flavor': {'extra_specs': {}}} for uuid, host in servers.items()},
        in_flight=())


def _moves(count, source='h1', destination='h2'):
    return [plans.Action(model.Migrate('vm%05d' % i, source, destination, 'overload'), 'c1',
                         plans.MANUAL) for i in range(count)]


def _orchestrator(database, nova, leader=lambda: True, cooldown=600, limits=LIMITS,
                  floor=1):
    return orchestrator.Orchestrator(nova, database, limits, cooldown, leader,
                                     floor_of=lambda view, cluster: floor)


def _approve(database, actions):
    plan_id = plans.save(database, plans.MANUAL, actions, 'approved', cluster='c1')
    assert plans.set_status(database, plan_id, 'executing', 'approved')
    [(_, _, pending, _)] = plans.runnable(database)
    return plan_id, pending


def test_ten_thousand_deferred_actions_cost_no_scan_and_no_query_each(database):
    """The old ``action not in waiting`` scan took 26 s here and one cooldown
    query per action as long again. What waits costs counter lookups only:
    the statements are those of the ten starts, and no action is compared
    with a list (``Action.__eq__`` is never called). Timings live in
    benchmarks/cycle_scale.py --unbalanced."""
    actions = [plans.Action(model.Migrate('vm%05d' % i, 'h%d' % (i % 100), 'h%d' % (100 + i % 100),
                                          'overload'), 'c1') for i in range(10000)]
    view = _view(['h%d' % i for i in range(200)],
                 {a.instance: a.source for a in actions})
    nova = RecordingNova()
    asked, statements, compared = [], [], []

    def count(conn, cursor, statement, *args):
        statements.append(statement)

    equal = type(actions[0]).__eq__

    def counting_eq(self, other):
        compared.append(1)
        return equal(self, other)

    sa.event.listen(database.engine, 'before_cursor_execute', count)
    type(actions[0]).__eq__ = counting_eq
    try:
        result = _orchestrator(database, nova,
                               leader=lambda: asked.append(1) or True).execute(actions, view)
    finally:
        type(actions[0]).__eq__ = equal
        sa.event.remove(database.engine, 'before_cursor_execute', count)
    assert result['started'] == 10 and len(nova.sent) == 10
    assert len(result['waiting']) == 9990
    assert compared == []
    # A few statements per start, plus one cooldown query per 500 migrations.
    assert len(statements) <= 10 * 4 + 10000 // 500 + 5, len(statements)
    # With HA each question is a query to the backend: asked before each start only.
    assert len(asked) == 10


def test_leadership_lost_mid_plan_leaves_the_rest_to_the_next_leader(database):
    plan_id, pending = _approve(database, _moves(4))
    view = _view(['h1', 'h2'], {a.instance: 'h1' for a in pending})
    answers = iter([True, True, False])
    first = RecordingNova()
    _orchestrator(database, first, leader=lambda: next(answers, False)).execute(
        pending, view, progress=plan_progress.Progress(database, plan_id))
    assert not plans.finish_if_complete(database, plan_id)
    assert plans.get(database, plan_id)['status'] == 'executing'  # not done: two never ran

    [(_, status, rest, _)] = plans.runnable(database)
    assert (status, [a.position for a in rest]) == ('executing', [2, 3])
    second = RecordingNova()
    view = _view(['h1', 'h2'], {a.instance: 'h1' for a in rest})
    _orchestrator(database, second).execute(rest, view, progress=plan_progress.Progress(database,
                                                                                plan_id))
    assert plans.finish_if_complete(database, plan_id)
    assert sorted(first.sent + second.sent) == ['vm00000', 'vm00001', 'vm00002', 'vm00003']


def test_an_action_nova_refuses_is_failed_with_the_reason(database):
    plan_id, pending = _approve(database, _moves(2))
    view = _view(['h1', 'h2'], {a.instance: 'h1' for a in pending})
    _orchestrator(database, RecordingNova(refuse={'vm00000'})).execute(
        pending, view, progress=plan_progress.Progress(database, plan_id))
    assert plans.finish_if_complete(database, plan_id)
    shown = plans.get(database, plan_id)
    assert [(a['status'], a['detail']) for a in shown['actions']] == [
        ('failed', 'nova refused (400): No valid host was found'), ('done', None)]


def test_an_exception_mid_plan_leaves_it_executing_and_nothing_is_sent_twice(database):
    plan_id, pending = _approve(database, _moves(3))
    view = _view(['h1', 'h2'], {a.instance: 'h1' for a in pending})
    first = RecordingNova(crash_on='vm00001')
    with pytest.raises(RuntimeError):
        _orchestrator(database, first).execute(pending, view,
                                               progress=plan_progress.Progress(database, plan_id))
    # The next cycle (or the next leader) resumes with what was never claimed.
    [(_, status, rest, _)] = plans.runnable(database)
    assert (status, [a.instance for a in rest]) == ('executing', ['vm00002'])
    second = RecordingNova()
    _orchestrator(database, second).execute(rest, view,
                                            progress=plan_progress.Progress(database, plan_id))
    assert plans.finish_if_complete(database, plan_id)
    assert first.sent + second.sent == ['vm00000', 'vm00002']
    shown = plans.get(database, plan_id)
    assert [a['status'] for a in shown['actions']] == ['done', 'failed', 'done']
    assert 'connection to the DRS database lost' in shown['actions'][1]['detail']


def test_a_daemon_suspend_respects_the_floor_an_admin_suspend_just_lowered(database):
    """Three active hosts, floor 2: the daemon planned suspending host1 on a
    snapshot where all three were active; an admin suspended host2 in between."""
    drs_hosts.ensure_many(database, ['h1', 'h2', 'h3'])
    view = _view(['h1', 'h2', 'h3'], {})
    accepted, _ = drs_hosts.suspend_within_floor(database, 'h2', ['h1', 'h2', 'h3'], 2,
                                                 'admin')
    assert accepted is not None
    suspend = plans.Action(model.Suspend('h1', 'underload'), 'c1')
    result = _orchestrator(database, RecordingNova(), floor=2).execute([suspend], view)
    assert result['started'] == 0
    assert 'floor of 2' in result['skipped'][0][1]
    assert drs_hosts.states(database)['h1'] == drs_hosts.ACTIVE


def test_a_daemon_suspend_within_the_floor_goes_ahead(database):
    drs_hosts.ensure_many(database, ['h1', 'h2', 'h3'])
    suspend = plans.Action(model.Suspend('h1', 'underload'), 'c1')
    result = _orchestrator(database, RecordingNova(), floor=2).execute(
        [suspend], _view(['h1', 'h2', 'h3'], {}))
    assert result['started'] == 1
    assert drs_hosts.states(database)['h1'] == drs_hosts.SUSPENDING


def test_a_move_the_plan_weighed_goes_one_requested_after_it_or_failed_waits(database):
    """The cooldown is the planner's: a server moved before the plan was decided
    (the core chose to move it again, its host being short) goes once the plan is
    approved; one whose move was requested after the decision, or failed within
    the cooldown, is refused, the word ``cooldown`` in the reason (what explain
    reads)."""
    from oslo_utils import timeutils

    from nova_drs.db import lb_migrations
    timeutils.set_time_override(timeutils.utcnow() - datetime.timedelta(minutes=10))
    try:
        lb_migrations.request(database, 'vm00000', 'h3', 'h1', 'live', 'earlier overload')
        failed = lb_migrations.request(database, 'vm00002', 'h1', 'h3', 'live', 'earlier')
        lb_migrations.finish(database, failed, 'failed')
        timeutils.advance_time_seconds(60)
        plan_id, pending = _approve(database, _moves(3))
        [(_, _, _, decided_at)] = plans.runnable(database)
        timeutils.advance_time_seconds(60)
        lb_migrations.request(database, 'vm00001', 'h1', 'h3', 'live', 'another plan')
    finally:
        timeutils.clear_time_override()
    view = _view(['h1', 'h2', 'h3'], {a.instance: 'h1' for a in pending})
    nova = RecordingNova()
    result = _orchestrator(database, nova, cooldown=3600).execute(
        pending, view, progress=plan_progress.Progress(database, plan_id), decided_at=decided_at)
    assert nova.sent == ['vm00000']
    assert sorted(a.instance for a, _ in result['skipped']) == ['vm00001', 'vm00002']
    assert all('cooldown' in why for _, why in result['skipped'])
    # without a cooldown nothing is held back
    assert _orchestrator(database, RecordingNova(), cooldown=0).execute(
        _moves(2)[1:], view)['started'] == 1


def test_a_started_suspend_hands_its_planned_moves_to_the_host_lifecycle(database):
    """The moves off a host the plan suspends are the lifecycle's, to the plan's
    destinations (evacuation.Targets); a suspend the limits defer hands nothing."""
    from nova_drs.daemon import evacuation
    drs_hosts.ensure_many(database, ['h1', 'h2', 'h3'])
    actions = [plans.Action(model.Migrate('vm1', 'h1', 'h3', 'underload'), 'c1'),
               plans.Action(model.Migrate('vm2', 'h2', 'h3', 'underload'), 'c1'),
               plans.Action(model.Suspend('h1', 'underload'), 'c1'),
               plans.Action(model.Suspend('h2', 'underload'), 'c1')]
    targets = evacuation.Targets()
    nova = RecordingNova()
    result = orchestrator.Orchestrator(
        nova, database, dict(LIMITS, suspends_per_cycle=1), 600, lambda: True,
        floor_of=lambda view, cluster: 1, targets=targets).execute(
            actions, _view(['h1', 'h2', 'h3'], {'vm1': 'h1', 'vm2': 'h2'}))
    assert nova.sent == [] and result['started'] == 1
    assert targets.of('vm1', 'h1') == 'h3'
    assert targets.of('vm2', 'h2') is None     # h2's suspend waits for a later cycle
