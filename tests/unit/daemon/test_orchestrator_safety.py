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

"""A plan's actions are checked against what nova shows now: one that no
longer fits is skipped, with its reason, and the others still run; nothing
goes past the cycle's limits or is sent twice.

Real orchestrator, plan progress and SQLite DRS database; nova is the
stand-in of fakes.py (fixtures: conftest.py). How finished moves are
settled: test_orchestrator_settle.py.
"""

import types

import pytest

from nova_drs import exception
from nova_drs import opt_out
from nova_drs.daemon import orchestrator
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import plan_progress
from nova_drs.db import plans
from nova_drs.loadbalancer import model
from tests.unit.daemon.lifecycle_steps import in_state
from tests.unit.daemon.lifecycle_steps import requests

LIMITS = {'per_host': 5, 'per_destination': 5, 'per_cluster': 10,
          'suspends_per_cycle': 1, 'wakes_per_cycle': 1}
HOSTS = ('h1', 'h2', 'h3', 'h4')


def view(nova, **overrides):
    """The cycle's view as execute reads it; overrides: {host: model.Host fields}."""
    return types.SimpleNamespace(
        snapshot=types.SimpleNamespace(hosts=tuple(
            model.Host(name, 16, 32768, 16000.0, cluster='c1', **overrides.get(name, {}))
            for name in HOSTS)),
        servers=nova.servers, in_flight=nova.in_flight())


def move(uuid, source='h1', destination='h2', automation=plans.AUTOMATIC):
    return plans.Action(model.Migrate(uuid, source, destination, 'overload'), 'c1', automation)


def run(database, nova, actions, leader=lambda: True, **overrides):
    """Store actions as an approved plan and execute it: (plan id, result)."""
    plan_id = plans.save(database, plans.MANUAL, actions, 'approved', cluster='c1')
    assert plans.set_status(database, plan_id, 'executing', 'approved')
    [(_, _, pending, _)] = plans.runnable(database)
    steps = orchestrator.Orchestrator(nova, database, LIMITS, 600, leader,
                                      floor_of=lambda view, cluster: 1)
    result = steps.execute(pending, view(nova, **overrides),
                           progress=plan_progress.Progress(database, plan_id))
    return plan_id, result


def outcomes(database, plan_id):
    return [(a['status'], a['detail']) for a in plans.get(database, plan_id)['actions']]


def test_an_action_whose_server_vanished_is_skipped_and_the_others_run(drs_db, nova):
    nova.add_server('vm2', 'h1')
    nova.add_server('vm3', 'h1')
    plan_id, result = run(drs_db, nova, [move('vm1'), move('vm2'), move('vm3')])
    assert nova.requests == [('vm2', 'h2'), ('vm3', 'h2')]
    assert outcomes(drs_db, plan_id) == [('skipped', 'instance no longer on h1'),
                                         ('done', None), ('done', None)]
    assert result['started'] == 2


@pytest.mark.parametrize('server, hosts, why', [
    ({'host': 'h3'}, {}, 'instance no longer on h1'),
    ({'task': 'rebooting'}, {}, 'instance busy (rebooting)'),
    ({'extra_specs': {opt_out.KEY: opt_out.DISABLED}}, {},
     'instance opted out (drs:automation=disabled)'),
    ({'extra_specs': {opt_out.KEY: opt_out.MANUAL}}, {},
     'instance opted out (drs:automation=manual)'),
    ({}, {'h2': {'power_state': model.SUSPENDED}}, 'destination not active'),
    ({}, {'h1': {'excluded': True}}, 'host excluded by rules or stale statistics'),
    ({}, {'h2': {'excluded': True}}, 'host excluded by rules or stale statistics'),
    ({'status': 'ERROR'}, {}, 'instance ERROR: neither live nor cold migratable'),
], ids=['moved', 'busy', 'opted-out', 'manual-only', 'asleep', 'source-excluded',
        'destination-excluded', 'error'])
def test_a_server_that_must_not_move_now_is_not_sent(drs_db, nova, server, hosts, why):
    nova.add_server('vm1', server.pop('host', 'h1'), **server)
    plan_id, result = run(drs_db, nova, [move('vm1')], **hosts)
    assert nova.requests == []
    assert outcomes(drs_db, plan_id) == [('skipped', why)]
    assert requests(drs_db) == [] and result['started'] == 0


def test_a_manual_opt_out_moves_only_on_a_manual_clusters_plan(drs_db, nova):
    nova.add_server('vm1', 'h1', extra_specs={opt_out.KEY: opt_out.MANUAL})
    plan_id, _ = run(drs_db, nova, [move('vm1', automation=plans.MANUAL)])
    assert nova.requests == [('vm1', 'h2')]
    assert outcomes(drs_db, plan_id) == [('done', None)]


def test_a_stopped_server_is_cold_migrated(drs_db, nova):
    nova.add_server('vm1', 'h1', status='SHUTOFF')
    run(drs_db, nova, [move('vm1')])
    assert nova.called('cold_migrate') == [('vm1', 'h2')]
    assert not nova.called('live_migrate')
    assert [(r['kind'], r['status']) for r in requests(drs_db)] == [('cold', 'requested')]


def test_no_answer_from_nova_fails_the_action_and_it_is_never_sent_again(drs_db, nova):
    nova.add_server('vm1', 'h1')
    nova.add_server('vm2', 'h1')
    nova.faults['live_migrate'] = lambda uuid, host: (
        exception.NovaUnavailable('POST /servers: timed out') if uuid == 'vm1' else None)
    with pytest.raises(exception.NovaUnavailable):
        run(drs_db, nova, [move('vm1'), move('vm2')])
    [(plan_id, _, pending, _)] = plans.runnable(drs_db)
    assert [a.instance for a in pending] == ['vm2']     # vm1 is not pending again
    status, detail = outcomes(drs_db, plan_id)[0]
    assert status == 'failed' and detail.startswith('no answer from nova, not retried')
    # nova may have it: the request stays open, counted as a move under way.
    assert [(r['instance_uuid'], r['status']) for r in requests(drs_db)] == [
        ('vm1', 'requested')]


def test_an_error_answer_fails_the_action_and_the_plan_goes_on(drs_db, nova):
    nova.add_server('vm1', 'h1')
    nova.add_server('vm2', 'h1')
    nova.faults['live_migrate'] = lambda uuid, host: (
        exception.NovaUnavailable('POST /servers: HTTP 503', 503) if uuid == 'vm1' else None)
    plan_id, _ = run(drs_db, nova, [move('vm1'), move('vm2')])
    assert outcomes(drs_db, plan_id) == [
        ('failed', 'nova refused (503): POST /servers: HTTP 503'), ('done', None)]
    assert [r['status'] for r in requests(drs_db)] == ['failed', 'requested']


def test_wakes_and_suspends_stay_within_the_cycles_limits(drs_db, nova):
    for host in ('h1', 'h2'):
        in_state(drs_db, host)
    for host in ('h3', 'h4'):
        in_state(drs_db, host, drs_hosts.SUSPENDING, drs_hosts.SUSPENDED)
    plan_id, result = run(drs_db, nova, [
        plans.Action(model.Suspend(h, 'underload'), 'c1') for h in ('h1', 'h2')] + [
        plans.Action(model.Wake(h, 'overload'), 'c1') for h in ('h3', 'h4')])
    assert drs_hosts.states(drs_db) == {'h1': 'suspending', 'h2': 'active',
                                        'h3': 'waking', 'h4': 'suspended'}
    assert [a.host for a in result['waiting']] == ['h2', 'h4']
    # Started (the host lifecycle carries them out), or pending for a later cycle.
    assert [status for status, _ in outcomes(drs_db, plan_id)] == [
        'started', 'pending', 'started', 'pending']


def test_a_wake_of_a_host_no_longer_asleep_is_skipped(drs_db, nova):
    in_state(drs_db, 'h3')
    plan_id, result = run(drs_db, nova, [plans.Action(model.Wake('h3', 'overload'), 'c1')])
    assert outcomes(drs_db, plan_id) == [('skipped', 'host no longer suspended')]
    assert drs_hosts.states(drs_db) == {'h3': 'active'} and result['started'] == 0


def test_leadership_lost_before_a_wake_leaves_it_to_the_next_leader(drs_db, nova):
    in_state(drs_db, 'h3', drs_hosts.SUSPENDING, drs_hosts.SUSPENDED)
    plan_id, result = run(drs_db, nova, [plans.Action(model.Wake('h3', 'overload'), 'c1')],
                          leader=lambda: False)
    assert drs_hosts.states(drs_db) == {'h3': 'suspended'}
    assert outcomes(drs_db, plan_id) == [('pending', None)] and result['started'] == 0


def test_a_suspend_another_daemon_claimed_is_not_started_twice(drs_db, nova):
    in_state(drs_db, 'h1')
    in_state(drs_db, 'h2')
    actions = [plans.Action(model.Suspend('h1', 'underload'), 'c1')]
    plan_id = plans.save(drs_db, plans.MANUAL, actions, 'approved', cluster='c1')
    assert plans.set_status(drs_db, plan_id, 'executing', 'approved')
    [(_, _, pending, _)] = plans.runnable(drs_db)
    assert plan_progress.claim(drs_db, plan_id, 0, 'other-daemon#1/p1')
    result = orchestrator.Orchestrator(nova, drs_db, LIMITS, 600, lambda: True).execute(
        pending, view(nova), progress=plan_progress.Progress(drs_db, plan_id))
    assert result['started'] == 0
    assert drs_hosts.states(drs_db)['h1'] == drs_hosts.ACTIVE


def test_moves_off_a_host_the_plan_suspends_are_left_to_the_host_lifecycle(drs_db, nova):
    in_state(drs_db, 'h1')
    in_state(drs_db, 'h2')
    nova.add_server('vm1', 'h1')
    plan_id, _ = run(drs_db, nova, [move('vm1'),
                                    plans.Action(model.Suspend('h1', 'underload'), 'c1')])
    assert nova.requests == []
    assert outcomes(drs_db, plan_id) == [
        ('skipped', 'its source is being suspended: the host lifecycle moves it'),
        ('started', None)]
    assert drs_hosts.states(drs_db)['h1'] == drs_hosts.SUSPENDING
