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

"""A plan action a previous leadership term left started is settled from nova's records."""

import datetime

import sqlalchemy as sa

from nova_drs import exception
from nova_drs.daemon import plan_recovery
from nova_drs.db import hosts
from nova_drs.db import lb_migrations
from nova_drs.db import models
from nova_drs.db import plan_progress
from nova_drs.db import plans
from nova_drs.loadbalancer import model
from tests.unit.daemon import fakes

OLD, NEW = 'member-a#1/p1', 'member-b#2/p2'


def nova_with(server=None, migrations=(), unavailable=False):
    """nova holding vm1 (``server``: where it is, None: deleted) and its migration records."""
    nova = fakes.FakeNova()
    if server is not None:
        nova.servers['vm1'] = server
    nova.migration_records.extend(migrations)
    if unavailable:
        nova.faults['server'] = exception.NovaUnavailable('GET /servers: timed out')
    return nova


def reconcile(nova, database):
    """plan_recovery.reconcile by the new term; it asks nova only of vm1's own records."""
    outcome = plan_recovery.reconcile(nova, database, NEW)
    assert all(filters == ({'instance_uuid': 'vm1'},) for filters in nova.called('migrations'))
    return outcome


def _claimed(database, action, token=OLD):
    """An executing plan whose one action ``token``'s term claimed; (plan id, claim time)."""
    plan_id = plans.save(database, plans.MANUAL, [plans.Action(action)], 'approved')
    assert plans.set_status(database, plan_id, 'executing', 'approved')
    assert plan_progress.claim(database, plan_id, 0, token)
    table = models.LbPlanAction.__table__
    with database.reader() as session:
        claimed_at = session.scalar(sa.select(table.c.updated_at))
    return plan_id, claimed_at


def _status(database, plan_id):
    return plans.get(database, plan_id)['actions'][0]['status']


def _server(host, task=None):
    return fakes.server('vm1', host, task=task)


MOVE = model.Migrate('vm1', 'src', 'dst', 'overload')


def _record(claimed_at, seconds, id_=7, status='completed'):
    created = claimed_at + datetime.timedelta(seconds=seconds)
    return {'id': id_, 'instance_uuid': 'vm1', 'status': status,
            'created_at': created.isoformat()}


def test_never_asked_goes_back_to_pending_and_runs_again(database):
    plan_id, claimed_at = _claimed(database, MOVE)
    # The dead leader recorded its request, then died before asking nova.
    lb_migrations.request(database, 'vm1', 'src', 'dst', 'live', 'overload')
    nova = nova_with(_server('src'), [_record(claimed_at, -3600, id_=3)])  # an older move
    assert reconcile(nova, database) == {plan_progress.PENDING: 1}
    assert _status(database, plan_id) == plan_progress.PENDING
    # That request is withdrawn: the resent move is not held back by a cooldown.
    assert lb_migrations.open_requests(database) == []
    assert [a.position for _, _, actions, _ in plans.runnable(database) for a in actions] == [0]


def test_on_its_destination_or_a_record_after_the_claim_is_done(database):
    plan_id, _ = _claimed(database, MOVE)
    assert reconcile(nova_with(_server('dst')), database) == {
        plan_progress.DONE: 1}
    assert _status(database, plan_id) == plan_progress.DONE
    plan_id, claimed_at = _claimed(database, MOVE)
    nova = nova_with(_server('src'), [_record(claimed_at, 5, status='error')])
    assert reconcile(nova, database) == {plan_progress.DONE: 1}
    assert 'nova migration 7 (error)' in plans.get(database, plan_id)['actions'][0]['detail']


def test_busy_or_unreachable_is_left_for_a_later_cycle(database):
    plan_id, _ = _claimed(database, MOVE)
    assert reconcile(nova_with(_server('src', 'migrating')), database) == {}
    assert reconcile(nova_with(unavailable=True), database) == {}
    assert _status(database, plan_id) == plan_progress.STARTED
    assert plans.finish_if_complete(database, plan_id)  # nothing pending: done
    assert [o[0] for o in plans.orphans(database, NEW)] == [plan_id]  # still settled


def test_gone_or_elsewhere_is_skipped(database):
    plan_id, _ = _claimed(database, MOVE)
    assert reconcile(nova_with(None), database) == {plan_progress.SKIPPED: 1}
    plan_id, _ = _claimed(database, MOVE)
    assert reconcile(nova_with(_server('third')), database) == {
        plan_progress.SKIPPED: 1}
    assert 'now on third' in plans.get(database, plan_id)['actions'][0]['detail']


def test_the_current_terms_own_claims_are_left_alone(database):
    plan_id, _ = _claimed(database, MOVE, token=NEW)
    assert plans.orphans(database, NEW) == []
    assert reconcile(nova_with(_server('src')), database) == {}
    assert _status(database, plan_id) == plan_progress.STARTED


def test_power_actions_follow_the_host_state(database):
    hosts.ensure(database, 'h1')
    hosts.ensure(database, 'h2')
    hosts.transition(database, 'h2', hosts.ACTIVE, hosts.SUSPENDING, 'test')
    never, _ = _claimed(database, model.Suspend('h1', 'power_saving'))
    started, _ = _claimed(database, model.Suspend('h2', 'power_saving'))
    assert reconcile(nova_with(), database) == {
        plan_progress.PENDING: 1, plan_progress.DONE: 1}
    assert (_status(database, never), _status(database, started)) == (
        plan_progress.PENDING, plan_progress.DONE)
