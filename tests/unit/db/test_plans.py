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

import json

import pytest

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
                                   'cluster': 'c1', 'automation': 'manual'}
    assert shown['actions'][2] == {'type': 'suspend', 'host': 'h3', 'reason': 'underload',
                                   'cluster': 'c1', 'automation': 'manual'}
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

