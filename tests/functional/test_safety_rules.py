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

"""The README's safety rules (issue 13 item 5), each on real nova.

Faults are real ones where nova can produce them (no valid destination, a
live migration still running at the timeout) and the in-process power
stand-in where the fault is the hardware's (a host that ignores a suspend or
never comes back). Each rule's test also shows the other side, so it fails
if the rule stops holding.
"""

import datetime
import time

from oslo_utils import timeutils

from nova_drs.daemon import cloud_view
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations as drs_migrations
from nova_drs.db import plans
from nova_drs.loadbalancer import model
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle
from tests.functional import test_lifecycle


class DeafHostPower(daemon_support.InProcessHostPower):
    """Hardware that takes power commands and does nothing."""

    def suspend(self, target):
        self.calls.append(('suspend', target.name))


def later(seconds):
    """A clock ``seconds`` ahead of now, for timeouts without waiting."""
    return lambda: timeutils.utcnow() + datetime.timedelta(seconds=seconds)


class TestMigrationFaults(test_lifecycle.LifecycleTestBase):
    # Live migrations run 5 s unless aborted.
    COMPUTE_DRIVER = 'fake.FakeLiveMigrateDriver'

    def test_failed_migration_abandons_the_suspend(self):
        server = self.boot_on('host1', 'stuck')
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self._wait_for_state_change(server, 'MIGRATING')
        # The migration fails in nova (here: an operator aborts it), the
        # server stays on host1.
        migration = self.admin_api.get_active_migrations(server['id'])[0]
        self.admin_api.delete_migration(server['id'], migration['id'])
        self._wait_for_state_change(server, 'ACTIVE')

        self.run_cycles('host1', 'active')

        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertIn('suspend abandoned: migration of %s failed' % server['id'],
                      record['state_reason'])
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertFalse(record['disabled_by_drs'])
        self.assertEqual([], self.power.calls)
        self.assertEqual('host1', self.server_host(server['id']))
        self.assertEqual('failed', drs_migrations.last_request(self.drs_db,
                                                               server['id'])['status'])


class TestMigrationTimeout(test_lifecycle.LifecycleTestBase):
    # Live migrations run 5 s unless aborted.
    COMPUTE_DRIVER = 'fake.FakeLiveMigrateDriver'

    def test_timed_out_migration_is_aborted_and_abandons_the_suspend(self):
        server = self.boot_on('host1', 'slow')
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        step = daemon_support.host_lifecycle(self, migration_timeout=1)
        step.advance(drs_hosts.get(self.drs_db, 'host1'))
        self._wait_for_state_change(server, 'MIGRATING')
        time.sleep(1.5)
        step.advance(drs_hosts.get(self.drs_db, 'host1'))
        self.wait_for_quiet()

        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertEqual('active', record['suspend_state'])
        self.assertIn('migration of %s timed out' % server['id'], record['state_reason'])
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual('host1', self.server_host(server['id']))
        self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])
        migrations = self.admin_api.api_get('/os-migrations').body['migrations']
        self.assertEqual(['cancelled'], [m['status'] for m in migrations])
        self.assertEqual('aborted', drs_migrations.last_request(self.drs_db,
                                                                server['id'])['status'])
        self.assertEqual([], self.power.calls)


class TestPowerTimeouts(test_lifecycle.LifecycleTestBase):

    def suspend_host1(self):
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        self.run_cycles('host1', 'suspended')

    def step(self, clock=timeutils.utcnow):
        daemon_support.host_lifecycle(self, clock=clock).advance(
            drs_hosts.get(self.drs_db, 'host1'))

    def step_past_timeout(self, state):
        """Steps 200 s and 301 s after now, either side of the 300 s timeouts: host1
        still ``state`` after the first; its record after the second."""
        self.step(later(200))
        self.assertEqual(state, drs_hosts.get(self.drs_db, 'host1')['suspend_state'])
        self.step(later(301))
        return drs_hosts.get(self.drs_db, 'host1')

    def test_suspend_timeout_puts_the_host_in_error(self):
        self.power = DeafHostPower(self)
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        self.step()     # disables, finds it empty, sends the suspend
        record = self.step_past_timeout('suspending')
        self.assertEqual('error', record['suspend_state'])
        self.assertIn('did not go down within 300s', record['state_reason'])
        self.assertEqual('up', self.service('host1')['state'])

    def test_wake_timeout_puts_the_host_in_error_and_a_later_wake_clears_it(self):
        self.suspend_host1()
        drs_hosts.transition(self.drs_db, 'host1', 'suspended', 'waking', 'test')
        self.step()                       # wake sent; the host never comes back
        record = self.step_past_timeout('waking')
        self.assertEqual('error', record['suspend_state'])
        self.assertIn('did not report up within 300s', record['state_reason'])
        self.assertTrue(record['wake_failed'])

        # The admin retries; this time the host boots.
        response = self.admin_api.api_post('/loadbalancer/action',
                                           {'unsuspend_host': {'host': 'host1'}})
        self.assertEqual(202, response.status)
        self.step()
        self.power.come_back('host1')
        self.run_cycles('host1', 'active')
        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertFalse(record['wake_failed'])
        self.assertEqual('enabled', self.service('host1')['status'])


class SafetyDaemonBase(test_daemon_cycle.DaemonTestBase):

    def cycles(self, count, stop=lambda: False):
        for _ in range(count):
            summary = self.cycle()
            if stop():
                break
        return summary


class TestWakeFailedKeepsHostOn(SafetyDaemonBase):

    def test_wake_failed_host_is_not_suspended(self):
        self.quiet_host1()
        drs_hosts.ensure(self.drs_db, 'host1')
        drs_hosts.set_fields(self.drs_db, 'host1', wake_failed=True)
        self.cycles(6, stop=lambda: 'suspended' in drs_hosts.states(self.drs_db).values())
        # The daemon consolidated, but not onto the quietest host: host1 would
        # be chosen otherwise (TestHostCooldown.test_host_woken_long_ago_...).
        self.assertEqual('active', self.state('host1'))
        self.assertIn('suspended', drs_hosts.states(self.drs_db).values())
        self.assertNotIn(('suspend', 'host1'), self.power.calls)


class TestHostCooldown(SafetyDaemonBase):
    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('loadbalancer', 'host_cooldown'): '1800'}

    def woken(self, seconds_ago):
        self.quiet_host1()
        for host in self.COMPUTE_HOSTS:
            drs_hosts.ensure(self.drs_db, host)
        drs_hosts.set_fields(self.drs_db, 'host1', state_changed_at=timeutils.utcnow()
                             - datetime.timedelta(seconds=seconds_ago))
        self.cycles(6, stop=lambda: 'suspended' in drs_hosts.states(self.drs_db).values())

    def test_host_woken_recently_is_not_suspended(self):
        self.woken(1700)
        self.assertEqual('active', self.state('host1'))
        self.assertIn('suspended', drs_hosts.states(self.drs_db).values())
        self.assertNotIn(('suspend', 'host1'), self.power.calls)

    def test_host_woken_long_ago_is_suspended(self):
        self.woken(1900)
        self.assertEqual('suspended', self.state('host1'))


class TestInstanceCooldown(SafetyDaemonBase):
    """An instance the daemon moved recently moves again only to relieve a host
    that runs short, and never back to the host it left (the core's cooldown,
    which sees the daemon's own requests before nova lists them)."""

    CLUSTER_METADATA = {'drs_policy': 'power_saving', 'min_active_hosts': '3'}
    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('loadbalancer', 'migration_cooldown'): '3600'}

    def overload_host2(self):
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'big', 'vcpus': 6, 'ram': 512, 'disk': 1}})
        servers = [self._create_server(name='s%d' % i, host='host2', networks='none',
                                       flavor_id=flavor['id']) for i in range(2)]
        daemon_support.record_load(
            self.drs_db, {'host1': 1.0, 'host2': 100.0, 'host3': 1.0},
            {s['id']: ('host2', 100.0) for s in servers})
        return servers

    def moved_by_drs(self, server, ago):
        request = drs_migrations.request(self.drs_db, server['id'], 'host3', 'host2', 'live',
                                         'test')
        drs_migrations.finish(self.drs_db, request, 'done')
        table = drs_migrations.models.LbMigration
        with self.drs_db.writer() as session:
            session.execute(drs_migrations.sa.update(table)
                            .where(table.instance_uuid == server['id'])
                            .values(created_at=timeutils.utcnow() - ago))

    def test_recently_moved_instances_move_again_only_to_relieve_a_short_host(self):
        servers = self.overload_host2()     # 12 busy vCPUs on 10, both moved from host3
        for server in servers:
            self.moved_by_drs(server, datetime.timedelta(seconds=600))
        summary = self.cycle()
        moves = [a for a in summary['actions'] if a.kind == 'migrate']
        self.assertEqual(1, len(moves), summary)      # the fewest that relieve host2
        self.assertEqual(1, summary['started'], summary)
        self.assertEqual('host1', moves[0].destination)   # not back to host3
        self.assertEqual(1, [self.server_host(s['id']) for s in servers].count('host2'))

    def test_long_ago_moves_do_not_hold_a_server(self):
        servers = self.overload_host2()
        for server in servers:
            self.moved_by_drs(server, datetime.timedelta(seconds=3700))
        summary = self.cycle()
        self.assertGreaterEqual(summary['started'], 1, summary)
        self.assertNotEqual(['host2', 'host2'], [self.server_host(s['id']) for s in servers])


class TestMigrationLimits(SafetyDaemonBase):
    """max_migrations_per_host / per_destination / per_cluster bound what one cycle
    starts; the rest waits. Real migrations through nova, hand-written plans."""

    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('loadbalancer', 'max_migrations_per_host'): '1',
                   ('loadbalancer', 'max_migrations_per_destination'): '1',
                   ('loadbalancer', 'max_migrations_per_cluster'): '2'}

    def execute(self, moves):
        """Boot one server per (source, destination), run the plan, return its result."""
        servers = [self._create_server(name='m%d' % k, host=source, networks='none')
                   for k, (source, _dest) in enumerate(moves)]
        daemon_support.record_load(self.drs_db, {h: 10.0 for h in self.COMPUTE_HOSTS},
                                   {s['id']: (self.server_host(s['id']), 10.0)
                                    for s in servers})
        view = cloud_view.build_view(self.balancer.observer.fetch(), cloud_view.Rules([]), 600)
        actions = [plans.Action(model.Migrate(server['id'], source, dest, 'overload'))
                   for server, (source, dest) in zip(servers, moves, strict=True)]
        return self.balancer.orchestrator.execute(actions, view)

    def assertStarted(self, result, count):
        self.assertEqual(count, result['started'], result)
        self.assertEqual(len(result['waiting']), len(result['skipped']), result)

    def test_per_source_host(self):
        result = self.execute([('host1', 'host2'), ('host1', 'host3')])
        self.assertStarted(result, 1)
        self.assertEqual('source at its migration limit', result['skipped'][0][1])

    def test_per_destination_host(self):
        result = self.execute([('host1', 'host3'), ('host2', 'host3')])
        self.assertStarted(result, 1)
        self.assertEqual('destination at its migration limit', result['skipped'][0][1])

    def test_per_cluster(self):
        result = self.execute([('host1', 'host2'), ('host2', 'host3'), ('host3', 'host1')])
        self.assertStarted(result, 2)
        self.assertEqual('cluster at its migration limit', result['skipped'][0][1])
