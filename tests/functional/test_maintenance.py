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

"""Maintenance mode, daemon side, on real nova: emptied like a suspend, kept on."""

from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations as drs_migrations
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle
from tests.functional import test_lifecycle


def enter(testcase, host):
    """``openstack drs host maintenance enter HOST``, through the real API."""
    response = testcase.admin_api.api_post('/loadbalancer/action',
                                           {'enter_maintenance': {'host': host}})
    testcase.assertEqual(202, response.status)


def leave(testcase, host):
    """``openstack drs host maintenance exit HOST``, through the real API."""
    response = testcase.admin_api.api_post('/loadbalancer/action',
                                           {'exit_maintenance': {'host': host}})
    testcase.assertEqual(202, response.status)


class TestMaintenance(test_lifecycle.LifecycleTestBase):

    def test_enter_empties_and_keeps_the_host_on_then_exit_enables(self):
        live = self.boot_on('host1', 'live')
        stopped = self.boot_on('host1', 'stopped', stopped=True)
        enter(self, 'host1')

        self.run_cycles('host1', 'maintenance')

        self.assert_no_server_on('host1')
        for server, status in ((live, 'ACTIVE'), (stopped, 'SHUTOFF')):
            self.assertEqual(status, self.admin_api.get_server(server['id'])['status'])
            self.assertIn(self.server_host(server['id']), ('host2', 'host3'))
        service = self.service('host1')
        self.assertEqual(('disabled', 'up'), (service['status'], service['state']))
        self.assertIn('maintenance', service['disabled_reason'])
        self.assertEqual([], self.power.calls)
        self.assertEqual([], drs_migrations.open_requests(self.drs_db))
        new = self._create_server(name='new', networks='none')
        self.assertNotEqual('host1', self.server_host(new['id']))
        # Staying in maintenance: later cycles change nothing.
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.assertEqual('maintenance', drs_hosts.get(self.drs_db, 'host1')['suspend_state'])
        self.assertEqual('disabled', self.service('host1')['status'])

        leave(self, 'host1')
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertFalse(drs_hosts.get(self.drs_db, 'host1')['disabled_by_drs'])
        self.assertEqual([], self.power.calls)

    def test_unmovable_server_keeps_it_entering_with_the_reason(self):
        movable = self.boot_on('host1', 'movable')
        rescued = self.boot_rescued('host1')
        enter(self, 'host1')

        for _ in range(3):
            self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
            self.wait_for_quiet()

        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertEqual('entering_maintenance', record['suspend_state'])
        self.assertIn('cannot enter maintenance yet', record['state_reason'])
        self.assertIn(rescued['id'], record['state_reason'])
        self.assertEqual('disabled', self.service('host1')['status'])
        self.assertEqual('host1', self.server_host(rescued['id']))
        self.assertNotEqual('host1', self.server_host(movable['id']))

        self.admin_api.post_server_action(rescued['id'], {'unrescue': None})
        self._wait_for_state_change(rescued, 'ACTIVE')
        self.run_cycles('host1', 'maintenance')
        self.assert_no_server_on('host1')
        self.assertEqual([], self.power.calls)

    def test_exit_while_entering_stops_the_evacuation(self):
        servers = [self.boot_on('host1', 'one'), self.boot_on('host1', 'two')]
        enter(self, 'host1')

        def crash_point(name):
            if name == 'maintenance:migration-requested':
                leave(self, 'host1')
        daemon_support.host_lifecycle(self, crash_point=crash_point).advance(
            drs_hosts.get(self.drs_db, 'host1'))
        self.wait_for_quiet()

        self.assertEqual(1, len([s for s in servers if self.server_host(s['id']) == 'host1']))
        self.assertEqual('active', drs_hosts.get(self.drs_db, 'host1')['suspend_state'])
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual([], drs_migrations.open_requests(self.drs_db))


class TestPlannerLeavesMaintenanceAlone(test_daemon_cycle.DaemonTestBase):
    """The planner never uses a host in maintenance, nor counts it as active."""

    COMPUTE_HOSTS = ('host1', 'host2', 'host3', 'host4')

    def consolidate_with_host1_in_maintenance(self):
        """host1 in maintenance and idle, host4 quiet, host2/host3 busier."""
        for host in self.COMPUTE_HOSTS:
            drs_hosts.ensure(self.drs_db, host)
        enter(self, 'host1')
        self.cycle()
        self.assertEqual('maintenance', self.state('host1'))
        busy = [self._create_server(name='b%d' % i, host=h, networks='none')
                for i, h in enumerate(('host2', 'host3'))]
        quiet = self._create_server(name='q', host='host4', networks='none')
        load = {s['id']: (self.server_host(s['id']), 40.0) for s in busy}
        load[quiet['id']] = ('host4', 5.0)
        daemon_support.record_load(
            self.drs_db, {'host1': 0.0, 'host2': 10.0, 'host3': 10.0, 'host4': 1.0}, load)
        for _ in range(6):
            self.cycle()
            if self.state('host4') == 'suspended':
                break
        self.assertEqual('maintenance', self.state('host1'))
        self.assertEqual([], self.nova.servers_on_host('host1'))
        self.assertNotIn(('suspend', 'host1'), self.power.calls)
        self.assertEqual('disabled', self.admin_api.get_services(
            binary='nova-compute', host='host1')[0]['status'])
        self.assertEqual(['active', 'active'], [self.state('host2'), self.state('host3')])


class TestMaintenanceHostIsNotPlanned(TestPlannerLeavesMaintenanceAlone):

    def test_other_hosts_are_still_consolidated(self):
        self.consolidate_with_host1_in_maintenance()
        self.assertEqual('suspended', self.state('host4'))


class TestMaintenanceHostIsNotActiveCapacity(TestPlannerLeavesMaintenanceAlone):
    CLUSTER_METADATA = {'drs_policy': 'power_saving', 'min_active_hosts': '3'}

    def test_min_active_hosts_does_not_count_it(self):
        self.consolidate_with_host1_in_maintenance()
        self.assertEqual('active', self.state('host4'))
