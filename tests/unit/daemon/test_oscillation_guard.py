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

"""The oscillation guard on a real (SQLite) DRS database."""

import datetime

from oslo_utils import timeutils

from nova_drs.daemon import oscillation
from nova_drs.db import lb_migrations
from nova_drs.db import models
from nova_drs.db import plans
from nova_drs.loadbalancer import model


def moved(database, uuid, times, age_seconds=60, status=None):
    for _ in range(times):
        row_id = lb_migrations.request(database, uuid, 'a', 'b', 'live', 'overload')
        with database.writer() as session:
            session.get(models.LbMigration, row_id).created_at = (
                timeutils.utcnow() - datetime.timedelta(seconds=age_seconds))
        if status is not None:
            lb_migrations.finish(database, row_id, status)


MIGRATE = plans.Action(model.Migrate('vm1', 'h1', 'h2', 'overload'))
SUSPEND = plans.Action(model.Suspend('h3', 'underload'))


def test_server_at_the_limit_is_held_and_others_move(database):
    moved(database, 'vm1', 3)
    moved(database, 'vm2', 2)
    other = plans.Action(model.Migrate('vm2', 'h1', 'h2', 'overload'))
    kept, held = oscillation.hold(database, [MIGRATE, other], {}, 3, 3600)
    assert kept == [other]
    assert [(h['instance'], h['host'], h['moves']) for h in held] == [('vm1', 'h1', 3)]
    assert 'max_moves_per_server 3' in held[0]['reason']


def test_moves_outside_the_window_do_not_count(database):
    moved(database, 'vm1', 5, age_seconds=7200)
    assert oscillation.hold(database, [MIGRATE], {}, 3, 3600) == ([MIGRATE], [])


def test_suspend_of_a_host_with_a_held_server_is_dropped(database):
    moved(database, 'vm9', 1)
    kept, held = oscillation.hold(database, [MIGRATE, SUSPEND], {'vm9': 'h3', 'vm1': 'h1'},
                                  1, 3600)
    assert kept == [MIGRATE]
    assert [h['instance'] for h in held] == ['vm9']


def test_window_zero_turns_the_guard_off(database):
    moved(database, 'vm1', 9)
    assert oscillation.hold(database, [MIGRATE], {}, 0, 0) == ([MIGRATE], [])


def test_the_planner_reads_every_server_at_the_limit_in_one_query(database):
    moved(database, 'vm1', 3)
    moved(database, 'vm2', 2)
    moved(database, 'vm3', 4, age_seconds=7200)    # outside the window
    since = timeutils.utcnow() - datetime.timedelta(seconds=3600)
    assert lb_migrations.moved_at_least(database, since, 3) == {'vm1': 3}
    assert lb_migrations.moved_at_least(database, since, 2) == {'vm1': 3, 'vm2': 2}


def test_servers_the_planner_already_left_are_reported_and_keep_their_host_on(database):
    # vm1 is at the limit: the view made it unmovable, so the plan has no move
    # of it; it is reported all the same, and its host h3 is not suspended.
    kept, held = oscillation.hold(database, [SUSPEND], {'vm1': 'h3'}, 3, 3600,
                                  at_limit={'vm1': 3, 'gone': 4})
    assert kept == []
    assert [(h['instance'], h['host'], h['moves']) for h in held] == [('vm1', 'h3', 3)]


def test_moves_that_failed_or_were_aborted_do_not_count(database):
    # A failed or aborted live migration left the server where it was: no
    # oscillation (the closed-loop twin under faults held servers that had
    # never moved). A move done or still under way counts.
    moved(database, 'vm1', 2, status='failed')
    moved(database, 'vm1', 2, status='aborted')
    moved(database, 'vm1', 2, status='done')
    moved(database, 'vm2', 1)
    moved(database, 'vm2', 2, status='done')
    assert oscillation.hold(database, [MIGRATE], {}, 3, 3600) == ([MIGRATE], [])
    since = timeutils.utcnow() - datetime.timedelta(seconds=3600)
    assert lb_migrations.moved_at_least(database, since, 2) == {'vm1': 2, 'vm2': 3}
    assert lb_migrations.recent_moves(database, {'vm1', 'vm2'}, since) == {'vm1': 2, 'vm2': 3}
