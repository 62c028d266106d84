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

"""The daemon stores the core's typed actions; the API shows their JSON form."""

import datetime
import json

from alembic import command
from oslo_utils import timeutils
import pytest
import sqlalchemy as sa

from nova_drs import client
from nova_drs.api import schemas
from nova_drs.db import api
from nova_drs.db import migration
from nova_drs.db import models
from nova_drs.db import plan_progress
from nova_drs.db import plans
from nova_drs.loadbalancer import model

MIGRATE = plans.Action(model.Migrate('vm1', 'h1', 'h2', 'overload'), 'c1', plans.MANUAL)
SUSPEND = plans.Action(model.Suspend('h3', 'underload'), 'c1', plans.MANUAL)
WAKE = plans.Action(model.Wake('h4', 'capacity'), 'c2')


@pytest.fixture
def database(tmp_path):
    database = api.Database('sqlite:///%s' % (tmp_path / 'drs.sqlite'))
    migration.sync(database)
    return database


def test_actions_come_back_as_stored_and_the_api_sees_their_json(database):
    plan_id = plans.save(database, plans.MANUAL, [WAKE, MIGRATE, SUSPEND], 'approved')
    assert plans.approved(database) == [(plan_id, [WAKE, MIGRATE, SUSPEND])]
    shown = plans.get(database, plan_id)
    assert shown['actions'][1] == {'type': 'migrate', 'instance': 'vm1', 'source': 'h1',
                                   'destination': 'h2', 'reason': 'overload',
                                   'cluster': 'c1', 'automation': 'manual',
                                   'status': 'pending', 'detail': None}
    assert shown['actions'][2] == {'type': 'suspend', 'host': 'h3', 'reason': 'underload',
                                   'cluster': 'c1', 'automation': 'manual',
                                   'status': 'pending', 'detail': None}
    assert shown['progress'] == {'pending': 3}
    assert shown['reasons'] == ['capacity', 'overload', 'underload']


def test_an_entry_that_is_not_an_action_is_left_out_and_the_rest_runs(database):
    plan_id = plans.save(database, plans.MANUAL, [MIGRATE], 'approved')
    with database.writer() as session:
        row = session.get(models.LbPlan, plan_id)
        row.actions = json.dumps([{'type': 'reboot', 'host': 'h1'}, MIGRATE.to_json(),
                                  {'type': 'migrate', 'instance': 'vm2'}])
    assert plans.approved(database) == [(plan_id, [MIGRATE])]


def test_each_action_reads_as_a_line():
    assert str(MIGRATE) == 'migrate vm1 h1 -> h2 (overload)'
    assert str(SUSPEND) == 'suspend h3 (underload)'
    assert repr([WAKE]) == '[<wake h4 (capacity) [c2, automatic]>]'
    assert (MIGRATE.host, SUSPEND.instance, SUSPEND.source) == (None, None, None)


def test_each_action_is_claimed_once_and_its_outcome_shown(database):
    plan_id = plans.save(database, plans.MANUAL, [WAKE, MIGRATE, SUSPEND], 'approved',
                         cluster='c1')
    assert plans.set_status(database, plan_id, 'executing', 'approved')
    [(_, status, pending, _)] = plans.runnable(database)
    assert (status, [a.position for a in pending]) == ('executing', [0, 1, 2])
    progress = plan_progress.Progress(database, plan_id)
    assert progress.claim(pending[0]) is True
    assert plan_progress.Progress(database, plan_id).claim(pending[0]) is False  # a second daemon
    progress.finished(pending[0], plan_progress.DONE)
    assert progress.claim(pending[1])
    progress.finished(pending[1], plan_progress.FAILED, 'nova refused: 400 no valid host')
    assert not plans.finish_if_complete(database, plan_id)  # the suspend is still pending
    # Resumed (another daemon, after a crash): only the suspend is left.
    [(_, _, left, _)] = plans.runnable(database)
    assert left == [SUSPEND] and left[0].position == 2
    progress = plan_progress.Progress(database, plan_id)
    progress.skip(left[0], 'host no longer active')
    progress.flush()
    assert plans.finish_if_complete(database, plan_id)
    shown = plans.get(database, plan_id)
    assert shown['status'] == 'done'
    assert [(a['status'], a['detail']) for a in shown['actions']] == [
        ('done', None), ('failed', 'nova refused: 400 no valid host'),
        ('skipped', 'host no longer active')]
    assert shown['progress'] == {'done': 1, 'failed': 1, 'skipped': 1}
    assert plans.runnable(database) == []


def test_plans_are_listed_and_shown_by_cluster(database):
    pending = plans.save(database, plans.MANUAL, [MIGRATE], 'pending', cluster='c1')
    automatic = plans.save(database, plans.AUTOMATIC, [WAKE], 'done', cluster='c2')
    assert plans.latest(database, 'c1')['id'] == pending
    assert plans.latest(database)['id'] == automatic
    listed = plans.list_plans(database)
    assert [(p['id'], p['cluster'], p['status'], p['actions'], p['progress'])
            for p in listed] == [(automatic, 'c2', 'done', 1, {'done': 1}),
                                 (pending, 'c1', 'pending', 1, {'pending': 1})]
    assert [p['id'] for p in plans.list_plans(database, status='pending')] == [pending]
    assert [p['id'] for p in plans.list_plans(database, cluster='c2')] == [automatic]


def test_purge_deletes_only_old_finished_plans_and_their_actions(database):
    old = timeutils.utcnow() - datetime.timedelta(days=30)
    done = plans.save(database, plans.AUTOMATIC, [WAKE], 'done')
    executing = plans.save(database, plans.MANUAL, [MIGRATE], 'executing')
    recent = plans.save(database, plans.AUTOMATIC, [WAKE], 'done')
    with database.writer() as session:
        session.execute(sa.update(models.LbPlan).where(models.LbPlan.id.in_([done, executing]))
                        .values(created_at=old, updated_at=old))
    assert plans.purge(database, timeutils.utcnow() - datetime.timedelta(days=7)) == 1
    assert plans.get(database, done) is None
    assert plans.get(database, executing) and plans.get(database, recent)
    with database.reader() as session:
        assert session.query(models.LbPlanAction).filter_by(plan_id=done).count() == 0


def _rows(database):
    with database.reader() as session:
        return session.execute(sa.select(models.LbPlan.id, models.LbPlan.cluster,
                                         models.LbPlan.status, models.LbPlan.updated_at)
                               .order_by(models.LbPlan.id)).all()


def test_an_unchanged_pending_plan_keeps_its_id_and_nothing_is_written(database):
    first = plans.offer(database, {'c1': [MIGRATE, SUSPEND]})
    before = _rows(database)
    again = plans.offer(database, {'c1': [MIGRATE, SUSPEND]})
    assert again == first
    assert _rows(database) == before  # no new row, no write (updated_at untouched)
    assert plans.count_pending(database) == 1
    assert plans.decide(database, first['c1'], 'approved', 'admin')['status'] == 'approved'


def test_a_changed_plan_supersedes_the_pending_one(database):
    old = plans.offer(database, {'c1': [MIGRATE, SUSPEND], 'c2': [WAKE]})
    # The same actions in another order are another plan.
    new = plans.offer(database, {'c1': [SUSPEND, MIGRATE], 'c2': [WAKE]})
    assert new['c2'] == old['c2'] and new['c1'] > old['c1']
    superseded = plans.get(database, old['c1'])
    assert (superseded['status'], superseded['decided_by']) == ('superseded', 'superseded')
    assert plans.superseded_by(database, old['c1'], 'c1') == new['c1']
    assert plans.decide(database, old['c1'], 'approved', 'admin') is None
    assert [a['type'] for a in plans.get(database, new['c1'])['actions']] == [
        'suspend', 'migrate']
    # A cluster without manual actions this cycle has no pending plan left.
    assert plans.offer(database, {'c1': [SUSPEND, MIGRATE]}) == {'c1': new['c1']}
    assert plans.get(database, old['c2'])['status'] == 'superseded'
    assert plans.superseded_by(database, old['c2'], 'c2') is None
    assert [p['id'] for p in plans.list_plans(database, status='pending')] == [new['c1']]
    assert plans.offer(database, {}) == {}
    assert plans.count_pending(database) == 0


def test_superseded_plans_are_finished_and_purged(database):
    old = plans.offer(database, {'c1': [MIGRATE]})['c1']
    plans.offer(database, {'c1': [SUSPEND]})
    later = timeutils.utcnow() + datetime.timedelta(days=1)
    assert plans.purgeable(database, later) == 1
    assert plans.purge(database, later) == 1
    assert plans.get(database, old) is None
    assert plans.count_pending(database) == 1


@pytest.fixture
def any_database(empty_database):
    """SQLite here (conftest.py); tests/component/db/test_plans.py runs the
    tests that take it again on the real servers."""
    migration.sync(empty_database)
    return empty_database


def test_racing_offers_never_leave_two_pending_plans(any_database, monkeypatch):
    """A daemon whose SELECT of the pending plans answered before another daemon's
    offer committed (simulated: the other one commits inside this one's
    transaction, and this one's SELECT answers what was pending before)."""
    database = any_database
    real = plans._pending

    def race(offered):
        with database.reader() as session:
            seen = real(session)

        def stale(session):
            monkeypatch.setattr(plans, '_pending', real)
            plans.offer(database, offered)  # the other daemon, committed first
            return seen
        monkeypatch.setattr(plans, '_pending', stale)

    # Both found no pending plan and both insert: only the newest stays pending.
    race({'c1': [MIGRATE]})
    mine = plans.offer(database, {'c1': [MIGRATE]})
    rows = _rows(database)
    assert [(cluster, status) for _, cluster, status, _ in rows] == [
        ('c1', 'superseded'), ('c1', 'pending')]
    assert mine == {'c1': rows[1].id}
    # Both read that plan pending and replace it: the loser of the swap saves nothing.
    race({'c1': [SUSPEND]})
    assert plans.offer(database, {'c1': [WAKE]}) == {}
    rows = _rows(database)
    assert [status for _, _, status, _ in rows] == ['superseded', 'superseded', 'pending']
    assert plans.get(database, rows[2].id)['actions'][0]['type'] == 'suspend'
    assert plans.count_pending(database) == 1


def test_superseded_status_after_db_sync_from_the_previous_head(empty_database):
    """0014: the check constraint takes ``superseded``; plans a cycle superseded
    before (``rejected`` by ``superseded``) get it, their progress rows kept;
    the downgrade gives them back."""
    database = empty_database
    migration.sync(database, '0013_migrations_created_at')
    superseded = plans.save(database, plans.MANUAL, [MIGRATE], 'rejected', cluster='c1')
    rejected = plans.save(database, plans.MANUAL, [MIGRATE], 'rejected', cluster='c1')
    with database.writer() as session:
        session.execute(sa.update(models.LbPlan).where(models.LbPlan.id == superseded)
                        .values(decided_by='superseded'))
    with pytest.raises(Exception, match='(?i)check|constraint'):
        plans.save(database, plans.MANUAL, [SUSPEND], 'superseded', cluster='c1')
    migration.sync(database)
    assert migration.current_revision(database) == '0014_plan_superseded'
    shown = plans.get(database, superseded)
    assert (shown['status'], shown['progress']) == ('superseded', {'pending': 1})
    assert plans.get(database, rejected)['status'] == 'rejected'
    with pytest.raises(Exception, match='(?i)check|constraint'):
        plans.save(database, plans.MANUAL, [SUSPEND], 'bogus', cluster='c1')
    with migration._connect(database) as connection:
        command.downgrade(migration._alembic_config(connection), '0013_migrations_created_at')
        connection.commit()
    shown = plans.get(database, superseded)
    assert (shown['status'], shown['decided_by']) == ('rejected', 'superseded')


def test_every_list_of_plan_statuses_agrees():
    """The API's ?status= enum and both CLIs' --status choices list every status."""
    enum = schemas.PLAN_LIST_QUERY['properties']['status']['items']['enum']
    assert set(plans.STATUSES) == set(client.PLAN_STATUSES) == set(enum)
    assert set(plans.FINISHED) | set(plans.RUNNABLE) | {'pending'} == set(plans.STATUSES)
