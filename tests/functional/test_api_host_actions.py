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

"""Host actions of issues 13 and 17: the active-host floor for admins, clearing
wake_failed, maintenance mode, and unsuspend once the power command left."""

import time
import uuid

import eventlet
from oslo_utils import timeutils
import pymysql
import sqlalchemy

from nova_drs.db import api as db_api
from nova_drs.db import hosts as db_hosts
from nova_drs.db import migration
from tests.functional import api_base


class HostActionTestCase(api_base.DrsApiTestCase):

    def act(self, action, host, api=None):
        return self.call(api or self.admin_api, 'POST', '/loadbalancer/action',
                         {action: {'host': host}})

    def state(self, host):
        return db_hosts.get(self.drs_db, host)['suspend_state']

    def aggregate(self, name, hosts, metadata):
        aggregate = self.admin_api.post_aggregate({'aggregate': {'name': name}})
        for host in hosts:
            self.admin_api.add_host_to_aggregate(aggregate['id'], host)
        self.admin_api.post_aggregate_action(
            aggregate['id'], {'set_metadata': {'metadata': metadata}})
        return aggregate


class TestFloorForAdminSuspends(HostActionTestCase):
    EXTRA_FLAGS = {('loadbalancer', 'min_active_hosts'): 2,
                   ('loadbalancer', 'hosts_in_reserve'): 0}

    def test_second_suspend_below_the_floor_is_409_naming_it(self):
        self.assertEqual(202, self.act('suspend_host', 'host1')[0])
        self.assertFault(409, self.act('suspend_host', 'host2'),
                         'below its floor of 2 (min_active_hosts 2 + hosts_in_reserve 0)')
        self.assertEqual(('suspending', 'active', 'active'),
                         tuple(self.state(h) for h in ('host1', 'host2', 'host3')))

    def test_hosts_already_suspended_or_in_maintenance_do_not_count(self):
        self.assertEqual(202, self.act('enter_maintenance', 'host3')[0])
        self.assertFault(409, self.act('suspend_host', 'host1'), 'would leave 1 active')
        self.assertEqual(202, self.act('exit_maintenance', 'host3')[0])
        self.assertEqual(202, self.act('suspend_host', 'host1')[0])

    def test_cancelled_suspend_frees_the_floor(self):
        self.assertEqual(202, self.act('suspend_host', 'host1')[0])
        self.assertEqual(202, self.act('unsuspend_host', 'host1')[0])
        self.assertEqual(202, self.act('suspend_host', 'host2')[0])

    def test_aggregate_metadata_sets_the_floor_of_its_cluster(self):
        # host1 + host2 form cluster "gold" with a floor of 1: one may go.
        self.aggregate('gold', ['host1', 'host2'],
                       {'drs_policy': 'power_saving', 'min_active_hosts': '1'})
        self.assertEqual(202, self.act('suspend_host', 'host1')[0])
        self.assertFault(409, self.act('suspend_host', 'host2'), 'cluster gold')
        # host3 alone in "default" under [loadbalancer] min_active_hosts = 2.
        self.assertFault(409, self.act('suspend_host', 'host3'), 'cluster default, below '
                         'its floor of 2')

    def test_hosts_in_reserve_from_metadata_adds_to_the_floor(self):
        self.aggregate('silver', ['host1', 'host2', 'host3'],
                       {'drs_policy': 'power_saving', 'min_active_hosts': '1',
                        'hosts_in_reserve': '2'})
        self.assertFault(409, self.act('suspend_host', 'host1'),
                         'floor of 3 (min_active_hosts 1 + hosts_in_reserve 2)')


    def test_invalid_metadata_falls_back_to_the_options_like_the_daemon(self):
        self.aggregate('bronze', ['host1', 'host2', 'host3'],
                       {'drs_policy': 'power_saving', 'min_active_hosts': 'many',
                        'hosts_in_reserve': '-1'})
        self.assertEqual(202, self.act('suspend_host', 'host1')[0])
        self.assertFault(409, self.act('suspend_host', 'host2'),
                         'cluster bronze, below its floor of 2 (min_active_hosts 2 + '
                         'hosts_in_reserve 0)')


class TestFloorRace(HostActionTestCase):
    EXTRA_FLAGS = {('loadbalancer', 'min_active_hosts'): 2}

    def test_a_suspend_committed_as_this_one_starts_is_counted(self):
        """The other admin's suspend commits just before this request's first
        write: this request counts after taking its locks, so it sees 2 active
        hosts and refuses (counting first and writing after accepted both)."""
        members = ('host1', 'host2', 'host3')
        db_hosts.ensure_many(self.drs_db, members)
        original = db_hosts.suspend_within_floor
        interleaved = []

        def racing_execute(conn, cursor, statement, parameters, context, executemany):
            if statement.lstrip().upper().startswith('UPDATE') and not interleaved:
                interleaved.append(True)
                # The other admin's request, complete, in its own transaction.
                self.assertIsNotNone(original(self.drs_db, 'host2', members, 2, 'other admin')[0])

        engine = self.drs_db.engine
        sqlalchemy.event.listen(engine, 'before_cursor_execute', racing_execute)
        self.addCleanup(sqlalchemy.event.remove, engine, 'before_cursor_execute',
                        racing_execute)
        accepted, counted = db_hosts.suspend_within_floor(self.drs_db, 'host1', members, 2,
                                                          'this admin')
        self.assertEqual([True], interleaved)
        self.assertEqual(2, counted)
        self.assertIsNone(accepted)
        self.assertEqual(('active', 'suspending', 'active'),
                         tuple(self.state(h) for h in members))


    def mariadb(self):
        """A fresh, migrated DRS database on the real MariaDB; every statement
        followed by a yield, so green threads interleave everywhere."""
        name = 'drs_floor_%s' % uuid.uuid4().hex[:12]
        server = pymysql.connect(host='127.0.0.1', user='root')
        server.cursor().execute('CREATE DATABASE %s' % name)
        self.addCleanup(server.close)
        self.addCleanup(server.cursor().execute, 'DROP DATABASE %s' % name)
        database = db_api.Database('mysql+pymysql://root@127.0.0.1/%s' % name)
        self.addCleanup(database.dispose)
        migration.sync(database)

        def interleave(*args):
            time.sleep(0.01)

        sqlalchemy.event.listen(database.engine, 'after_cursor_execute', interleave)
        return database

    def test_concurrent_first_suspends_create_the_records_once(self):
        database = self.mariadb()
        members = ('host1', 'host2', 'host3')
        threads = [eventlet.spawn(db_hosts.ensure_many, database, members) for _ in range(3)]
        for thread in threads:
            thread.wait()
        self.assertEqual(sorted(members), sorted(db_hosts.states(database)))

    def test_two_concurrent_suspends_on_mariadb_exactly_one_accepted(self):
        """Two concurrent requests (green threads, as in nova-api) on real MariaDB."""
        database = self.mariadb()
        members = ('host1', 'host2', 'host3')
        db_hosts.ensure_many(database, members)
        for attempt in range(5):
            with self.subTest(attempt=attempt):
                threads = [eventlet.spawn(db_hosts.suspend_within_floor, database, host,
                                          members, 2, 'admin %s' % host)
                           for host in ('host1', 'host2')]
                accepted = [thread.wait()[0] for thread in threads]
                self.assertEqual(1, len([a for a in accepted if a is not None]), accepted)
                states = db_hosts.states(database)
                self.assertEqual(2, list(states.values()).count('active'), states)
                for host in members:
                    if states[host] != 'active':
                        db_hosts.transition(database, host, 'suspending', 'active', 'reset')


class TestClearWakeFailed(HostActionTestCase):

    def test_admin_clears_the_flag(self):
        db_hosts.ensure(self.drs_db, 'host2')
        db_hosts.set_fields(self.drs_db, 'host2', wake_failed=True)
        status, body = self.act('clear_wake_failed', 'host2')
        self.assertEqual(200, status, body)
        self.assertFalse(body['host']['wake_failed'])
        self.assertFalse(db_hosts.get(self.drs_db, 'host2')['wake_failed'])
        # Clearing a clear flag is harmless.
        self.assertEqual(200, self.act('clear_wake_failed', 'host2')[0])

    def test_non_admin_cannot_and_unknown_host_is_404(self):
        db_hosts.ensure(self.drs_db, 'host2')
        db_hosts.set_fields(self.drs_db, 'host2', wake_failed=True)
        for api in (self.api_fixture.api, self.api_fixture.reader_api,
                    self.api_fixture.other_api):
            self.assertFault(403, self.act('clear_wake_failed', 'host2', api=api))
        self.assertTrue(db_hosts.get(self.drs_db, 'host2')['wake_failed'])
        self.assertFault(404, self.act('clear_wake_failed', 'nosuch'))


class TestMaintenance(HostActionTestCase):

    def test_enter_and_exit(self):
        status, body = self.act('enter_maintenance', 'host1')
        self.assertEqual(202, status, body)
        self.assertEqual('entering_maintenance', body['host']['suspend_state'])
        self.assertEqual('maintenance requested by admin', body['host']['state_reason'])
        self.assertFault(409, self.act('enter_maintenance', 'host1'), 'entering_maintenance')
        self.assertFault(409, self.act('suspend_host', 'host1'), 'entering_maintenance')
        status, body = self.act('exit_maintenance', 'host1')
        self.assertEqual(202, status, body)
        self.assertEqual('active', self.state('host1'))

    def test_exit_from_maintenance_the_daemon_reached(self):
        self.assertEqual(202, self.act('enter_maintenance', 'host2')[0])
        db_hosts.transition(self.drs_db, 'host2', 'entering_maintenance', 'maintenance',
                            'daemon: host empty')
        self.assertEqual('maintenance', self.call(self.admin_api, 'GET', '/loadbalancer/host2')
                         [1]['host']['suspend_state'])
        self.assertEqual(202, self.act('exit_maintenance', 'host2')[0])
        self.assertEqual('active', self.state('host2'))

    def test_conflicts(self):
        self.assertFault(409, self.act('exit_maintenance', 'host1'),
                         'only a host entering or in maintenance')
        self.assertEqual(202, self.act('suspend_host', 'host3')[0])
        self.assertFault(409, self.act('enter_maintenance', 'host3'),
                         'only an active host can enter maintenance')
        self.assertFault(409, self.act('exit_maintenance', 'host3'), 'suspending')

    def test_forbidden_and_not_found(self):
        for api in (self.api_fixture.api, self.api_fixture.reader_api,
                    self.api_fixture.other_api):
            for action in ('enter_maintenance', 'exit_maintenance'):
                self.assertFault(403, self.act(action, 'host1', api=api))
        self.assertIsNone(db_hosts.get(self.drs_db, 'host1'))
        self.assertFault(404, self.act('enter_maintenance', 'nosuch'))


class TestUnsuspendAfterPowerCommand(HostActionTestCase):

    def test_unsuspend_once_the_power_command_left_is_409(self):
        self.assertEqual(202, self.act('suspend_host', 'host3')[0])
        db_hosts.set_fields(self.drs_db, 'host3', power_requested_at=timeutils.utcnow())
        self.assertFault(409, self.act('unsuspend_host', 'host3'),
                         'suspend already powering off')
        self.assertEqual('suspending', self.state('host3'))
