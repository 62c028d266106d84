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

from oslo_utils import timeutils
import pytest
import sqlalchemy as sa

from nova_drs.db import api
from nova_drs.db import migration
from nova_drs.db import models
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
    progress = plans.Progress(database, plan_id)
    assert progress.claim(pending[0]) is True
    assert plans.Progress(database, plan_id).claim(pending[0]) is False  # a second daemon
    progress.finished(pending[0], plans.DONE)
    assert progress.claim(pending[1])
    progress.finished(pending[1], plans.FAILED, 'nova refused: 400 no valid host')
    assert not plans.finish_if_complete(database, plan_id)  # the suspend is still pending
    # Resumed (another daemon, after a crash): only the suspend is left.
    [(_, _, left, _)] = plans.runnable(database)
    assert left == [SUSPEND] and left[0].position == 2
    progress = plans.Progress(database, plan_id)
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
