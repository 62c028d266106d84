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

"""Host suspend/wake lifecycle against real nova (live + cold migrations)."""

from oslo_utils import timeutils

from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations as drs_migrations
from tests.functional import base
from tests.functional import daemon_support


class Crash(Exception):
    """Stands for the daemon process dying at a given point."""


class LifecycleTestBase(base.DrsFunctionalTestCase):
    # Live migrations finish at once (FakeLiveMigrateDriver waits 5 s each).
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'

    def setUp(self):
        super().setUp()
        self.nova = daemon_support.nova_api_for(self)
        self.power = daemon_support.InProcessHostPower(self)
        for host in self.COMPUTE_HOSTS:
            drs_hosts.ensure(self.drs_db, host)

    def lifecycle(self, crash_at=None):
        def crash_point(name):
            if name == crash_at:
                raise Crash(name)
        return daemon_support.host_lifecycle(self, crash_point=crash_point)

    def run_cycles(self, host, until, crash_at=None, limit=10):
        """Run cycles (a fresh daemon after a crash) until ``host`` reaches ``until``."""
        crashed = False
        for _ in range(limit):
            record = drs_hosts.get(self.drs_db, host)
            if record['suspend_state'] == until:
                return crashed
            try:
                self.lifecycle(None if crashed else crash_at).advance(record)
            except Crash:
                crashed = True
            self.wait_for_quiet()
        self.fail('%s stuck in %s (wanted %s): %s' % (
            host, record['suspend_state'], until, record['state_reason']))

    def wait_for_quiet(self, timeout=20):
        """Live migrations run in nova's background threads: let them finish."""
        busy = daemon_support.settle(self.nova, timeout)
        if busy:
            self.fail('servers still busy after %ds: %s' % (timeout, busy))

    def boot_rescued(self, host):
        """A server in RESCUE on ``host``: one nova does not migrate, which keeps
        the host from being emptied."""
        rescued = self.boot_on(host, 'rescued')
        self.admin_api.post_server_action(rescued['id'], {'rescue': {}})
        self._wait_for_state_change(rescued, 'RESCUE')
        return rescued

    def boot_on(self, host, name, stopped=False):
        server = self._create_server(name=name, host=host, networks='none')
        self.assertEqual(host, self.server_host(server['id']))
        if stopped:
            server = self._stop_server(server)
        return server

    def service(self, host):
        return self.admin_api.get_services(binary='nova-compute', host=host)[0]

    def assert_no_server_on(self, host):
        self.assertEqual([], self.nova.servers_on_host(host))


class TestSuspendAndWake(LifecycleTestBase):

    def test_suspend_moves_everything_then_wake_restores(self):
        live = self.boot_on('host1', 'live')
        paused = self.boot_on('host1', 'paused')
        self.admin_api.post_server_action(paused['id'], {'pause': None})
        self._wait_for_state_change(paused, 'PAUSED')
        stopped = self.boot_on('host1', 'stopped', stopped=True)
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')

        self.run_cycles('host1', 'suspended')

        self.assert_no_server_on('host1')
        for server, status in ((live, 'ACTIVE'), (paused, 'PAUSED'), (stopped, 'SHUTOFF')):
            current = self.admin_api.get_server(server['id'])
            self.assertEqual(status, current['status'])
            self.assertIn(self.server_host(server['id']), ('host2', 'host3'))
        self.assertEqual('disabled', self.service('host1')['status'])
        self.assertEqual([('suspend', 'host1')], self.power.calls)
        migrations = self.admin_api.api_get('/os-migrations').body['migrations']
        cold = [m for m in migrations if m['instance_uuid'] == stopped['id']]
        self.assertEqual(['confirmed'], [m['status'] for m in cold])
        new = self._create_server(name='new', networks='none')
        self.assertNotEqual('host1', self.server_host(new['id']))

        drs_hosts.transition(self.drs_db, 'host1', 'suspended', 'waking', 'test')
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.assertEqual(('wake', 'host1'), self.power.calls[-1])
        self.assertEqual('waking', drs_hosts.get(self.drs_db, 'host1')['suspend_state'])
        self.power.come_back('host1')
        self.run_cycles('host1', 'active')
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertFalse(drs_hosts.get(self.drs_db, 'host1')['disabled_by_drs'])
        self.assertEqual([], [m for m in drs_migrations.open_requests(self.drs_db)])

    def test_unmovable_server_keeps_host_active(self):
        self.boot_on('host1', 'movable')
        rescued = self.boot_rescued('host1')
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')

        self.run_cycles('host1', 'active')

        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertIn(rescued['id'], record['state_reason'])
        self.assertIn('RESCUE', record['state_reason'])
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual([], self.power.calls)
        self.assertEqual('host1', self.server_host(rescued['id']))

    def test_servers_found_after_the_power_command_wake_the_host(self):
        self.boot_on('host1', 'late')
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        drs_hosts.set_fields(self.drs_db, 'host1',
                             power_requested_at=timeutils.utcnow())
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertEqual('error', record['suspend_state'])
        self.assertIn('servers appeared', record['state_reason'])
        self.assertEqual([('wake', 'host1')], self.power.calls)

    def test_admin_disabled_service_is_not_reenabled(self):
        self.admin_api.put_service(self.service('host1')['id'],
                                   {'status': 'disabled', 'disabled_reason': 'admin'})
        rescued = self.boot_on('host2', 'x')  # host1 takes nothing while disabled
        self.assertEqual('host2', self.server_host(rescued['id']))
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        self.run_cycles('host1', 'suspended')
        drs_hosts.transition(self.drs_db, 'host1', 'suspended', 'waking', 'test')
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.power.come_back('host1')
        self.run_cycles('host1', 'active')
        self.assertEqual('disabled', self.service('host1')['status'])
        self.assertEqual('admin', self.service('host1')['disabled_reason'])


class TestCrashRecovery(LifecycleTestBase):
    """Kill the daemon at every step: a restarted daemon converges, nothing lost."""

    SUSPEND_POINTS = ('suspend:flag-written', 'suspend:service-disabled',
                      'suspend:migration-recorded', 'suspend:migration-requested',
                      'suspend:resize-confirmed', 'suspend:power-requested',
                      'suspend:power-sent')
    WAKE_POINTS = ('wake:power-requested', 'wake:power-sent', 'wake:service-enabled')

    def _suspend_with_crash(self, point):
        servers = [self.boot_on('host1', 'live'),
                   self.boot_on('host1', 'stopped', stopped=True)]
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        crashed = self.run_cycles('host1', 'suspended', crash_at=point)
        self.assertTrue(crashed, 'crash point %s never reached' % point)
        self.assert_no_server_on('host1')
        for server in servers:
            self.assertIn(self.admin_api.get_server(server['id'])['status'],
                          ('ACTIVE', 'SHUTOFF'))
            self.assertIn(self.server_host(server['id']), ('host2', 'host3'))
        self.assertEqual(1, self.power.calls.count(('suspend', 'host1')))

    def _wake_with_crash(self, point):
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        self.run_cycles('host1', 'suspended')
        drs_hosts.transition(self.drs_db, 'host1', 'suspended', 'waking', 'test')
        crashed = False
        for _ in range(6):
            record = drs_hosts.get(self.drs_db, 'host1')
            if record['suspend_state'] == 'active':
                break
            try:
                self.lifecycle(None if crashed else point).advance(record)
            except Crash:
                crashed = True
            self.wait_for_quiet()
            if 'host1' in self.power.off and ('wake', 'host1') in self.power.calls:
                self.power.come_back('host1')
        self.assertTrue(crashed, 'crash point %s never reached' % point)
        self.assertEqual('active', drs_hosts.get(self.drs_db, 'host1')['suspend_state'])
        self.assertEqual('enabled', self.service('host1')['status'])

    def test_abort_crash_still_reenables(self):
        self.boot_rescued('host1')
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        crashed = self.run_cycles('host1', 'active', crash_at='abort:service-enabled')
        self.assertTrue(crashed)
        # The host is active again; the next cycle clears what the crash left.
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertFalse(drs_hosts.get(self.drs_db, 'host1')['disabled_by_drs'])


def _make_crash_test(kind, point):
    def test(self):
        getattr(self, '_%s_with_crash' % kind)(point)
    test.__name__ = 'test_crash_at_%s' % point.replace(':', '_').replace('-', '_')
    return test


for _point in TestCrashRecovery.SUSPEND_POINTS:
    _test = _make_crash_test('suspend', _point)
    setattr(TestCrashRecovery, _test.__name__, _test)
for _point in TestCrashRecovery.WAKE_POINTS:
    _test = _make_crash_test('wake', _point)
    setattr(TestCrashRecovery, _test.__name__, _test)
