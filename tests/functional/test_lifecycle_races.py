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

"""An admin's unsuspend raced against every step of a suspend, on real nova.

The lifecycle's ``crash_point`` hook sends ``unsuspend_host`` through the real
API at one step; whoever wins, the host must end consistent: DRS state, nova's
service status and the power stand-in agree, no server is left off its state,
and no evacuation row stays open.
"""

import collections
import random
import threading
import time

from nova_drs import conf as drs_conf
from nova_drs.daemon import lifecycle
from nova_drs.daemon import service
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations as drs_migrations
from nova_drs.loadbalancer import catalog
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle
from tests.functional import test_lifecycle

SUSPEND_POINTS = ('suspend:flag-written', 'suspend:service-disabled',
                  'suspend:migration-recorded', 'suspend:migration-requested',
                  'suspend:resize-confirmed', 'suspend:power-requested',
                  'suspend:power-sent')
#: Points reached by a suspend of a host that holds no server.
EMPTY_HOST_POINTS = ('suspend:flag-written', 'suspend:service-disabled',
                     'suspend:power-requested', 'suspend:power-sent')
#: Once the power command is recorded the cancel is refused: the suspend ends.
POWER_POINTS = frozenset(('suspend:power-requested', 'suspend:power-sent'))


class TestUnsuspendAtEveryStep(test_lifecycle.LifecycleTestBase):

    def setUp(self):
        super().setUp()
        self.refusals = []

    def unsuspend(self, host):
        response = self.admin_api.api_post('/loadbalancer/action',
                                           {'unsuspend_host': {'host': host}},
                                           check_response_status=[202, 409])
        if response.status == 409:
            self.refusals.append(response.body['conflictingRequest']['message'])
        return response

    def racing_lifecycle(self, point, answers):
        """A lifecycle that sends one unsuspend when it reaches ``point``."""
        def crash_point(name):
            if name == point and not answers:
                answers.append(self.unsuspend('host1').status)
        return daemon_support.host_lifecycle(self, crash_point=crash_point)

    def _race(self, point, with_servers):
        servers = []
        if with_servers:
            servers = [self.boot_on('host1', 'live'),
                       self.boot_on('host1', 'stopped', stopped=True)]
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        answers = []
        for _ in range(8):
            record = drs_hosts.get(self.drs_db, 'host1')
            if record['suspend_state'] != 'suspending' and answers:
                break
            self.racing_lifecycle(point, answers).advance(record)
            self.wait_for_quiet()
        # The cycle after the race: reconcile what the losing step left.
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.wait_for_quiet()
        self.assertEqual(1, len(answers), 'point %s never reached' % point)

        record = drs_hosts.get(self.drs_db, 'host1')
        if point in POWER_POINTS:
            self.assertEqual([409], answers)
            self.assertIn('suspend already powering off', self.refusals[0])
            self.assertEqual('suspended', record['suspend_state'])
            self.assertEqual('disabled', self.service('host1')['status'])
            self.assertIn('host1', self.power.off)
            self.assert_no_server_on('host1')
        else:
            self.assertEqual([202], answers)
            self.assertEqual('active', record['suspend_state'], record['state_reason'])
            self.assertEqual('enabled', self.service('host1')['status'])
            self.assertEqual([], self.power.calls)
            self.assertFalse(record['disabled_by_drs'])
        self.assertEqual(1 if point in POWER_POINTS else 0,
                         self.power.calls.count(('suspend', 'host1')))
        for server in servers:
            self.assertIn(self.admin_api.get_server(server['id'])['status'],
                          ('ACTIVE', 'SHUTOFF'))
        self.assertEqual([], drs_migrations.open_requests(self.drs_db))

    def test_cancel_stops_the_evacuation(self):
        """Cancelled while the first server moves: the second is never asked to."""
        servers = [self.boot_on('host1', 'one'), self.boot_on('host1', 'two')]
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        answers = []
        self.racing_lifecycle('suspend:migration-requested', answers).advance(
            drs_hosts.get(self.drs_db, 'host1'))
        self.wait_for_quiet()
        self.assertEqual([202], answers)
        moved = [s for s in servers if self.server_host(s['id']) != 'host1']
        self.assertEqual(1, len(moved))
        migrations = self.admin_api.api_get('/os-migrations').body['migrations']
        self.assertEqual([moved[0]['id']], [m['instance_uuid'] for m in migrations])
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.lifecycle().close_abandoned_evacuations()
        self.assertEqual([], drs_migrations.open_requests(self.drs_db))
        with self.drs_db.reader() as session:
            statuses = [row.status for row in session.query(
                drs_migrations.models.LbMigration)]
        self.assertEqual(['cancelled'], statuses)
        self.assertEqual('enabled', self.service('host1')['status'])


    def test_unsuspend_during_an_abandoned_suspend(self):
        """The daemon abandons (unmovable server) while the admin cancels."""
        self.boot_rescued('host1')
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        answers = []
        self.racing_lifecycle('abort:service-enabled', answers).advance(
            drs_hosts.get(self.drs_db, 'host1'))
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.assertEqual([409], answers)   # already active again: nothing to cancel
        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertEqual('active', record['suspend_state'])
        self.assertFalse(record['disabled_by_drs'])
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual([], self.power.calls)

    def _wake_race(self, point):
        """A wake cannot be cancelled: the unsuspend is refused, the wake completes."""
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        self.run_cycles('host1', 'suspended')
        drs_hosts.transition(self.drs_db, 'host1', 'suspended', 'waking', 'test')
        answers = []
        for _ in range(6):
            record = drs_hosts.get(self.drs_db, 'host1')
            if record['suspend_state'] == 'active':
                break
            self.racing_lifecycle(point, answers).advance(record)
            if 'host1' in self.power.waking:
                self.power.come_back('host1')
        self.assertEqual([409], answers, 'point %s never reached' % point)
        self.assertEqual('active', drs_hosts.get(self.drs_db, 'host1')['suspend_state'])
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertNotIn('host1', self.power.off)

    def _maintenance_race(self, point):
        """Maintenance ended at each step of entering it: the host serves again."""
        servers = [self.boot_on('host1', 'live'),
                   self.boot_on('host1', 'stopped', stopped=True)]
        self.admin_api.api_post('/loadbalancer/action',
                                {'enter_maintenance': {'host': 'host1'}})
        ended = []

        def crash_point(name):
            if name == point and not ended:
                ended.append(self.admin_api.api_post(
                    '/loadbalancer/action', {'exit_maintenance': {'host': 'host1'}},
                    check_response_status=[202, 409]).status)
        for _ in range(6):
            record = drs_hosts.get(self.drs_db, 'host1')
            if record['suspend_state'] != 'entering_maintenance':
                break
            daemon_support.host_lifecycle(self, crash_point=crash_point).advance(record)
            self.wait_for_quiet()
        self.lifecycle().advance(drs_hosts.get(self.drs_db, 'host1'))
        self.wait_for_quiet()
        self.lifecycle().close_abandoned_evacuations()
        self.assertEqual([202], ended, 'point %s never reached' % point)
        self.assertEqual('active', drs_hosts.get(self.drs_db, 'host1')['suspend_state'])
        self.assertEqual('enabled', self.service('host1')['status'])
        self.assertEqual([], self.power.calls)
        for server in servers:
            self.assertIn(self.admin_api.get_server(server['id'])['status'],
                          ('ACTIVE', 'SHUTOFF'))
        self.assertEqual([], drs_migrations.open_requests(self.drs_db))


WAKE_POINTS = ('wake:power-requested', 'wake:power-sent', 'wake:service-enabled')
MAINTENANCE_POINTS = ('maintenance:flag-written', 'maintenance:service-disabled',
                      'maintenance:migration-recorded', 'maintenance:migration-requested',
                      'maintenance:resize-confirmed')


def _make_race_test(point, with_servers):
    def test(self):
        self._race(point, with_servers)
    test.__name__ = 'test_unsuspend_at_%s%s' % (
        point.split(':')[1].replace('-', '_'), '' if with_servers else '_empty_host')
    return test


for _point in SUSPEND_POINTS:
    _test = _make_race_test(_point, with_servers=True)
    setattr(TestUnsuspendAtEveryStep, _test.__name__, _test)
for _point in EMPTY_HOST_POINTS:
    _test = _make_race_test(_point, with_servers=False)
    setattr(TestUnsuspendAtEveryStep, _test.__name__, _test)
for _point in WAKE_POINTS + MAINTENANCE_POINTS:
    def _test(self, point=_point):
        getattr(self, '_%s_race' % point.split(':')[0])(point)
    _test.__name__ = 'test_%s' % _point.replace(':', '_at_').replace('-', '_')
    setattr(TestUnsuspendAtEveryStep, _test.__name__, _test)


class TestHammer(test_daemon_cycle.DaemonTestBase):
    """6 threads send suspend/unsuspend through the API while the daemon cycles."""

    COMPUTE_HOSTS = ('host1', 'host2', 'host3', 'host4')
    TARGETS = ('host1', 'host2', 'host3')   # host4 always has room for everyone
    CLUSTER_METADATA = {'drs_policy': 'none'}   # only admin requests act
    THREADS = 6
    CYCLES = 12

    def worker(self, seed, stop, go, answers):
        rng = random.Random(seed)
        while not stop.is_set():
            if not go.wait(0.1):
                continue
            action = rng.choice(('suspend_host', 'unsuspend_host'))
            response = self.admin_api.api_post(
                '/loadbalancer/action', {action: {'host': rng.choice(self.TARGETS)}},
                check_response_status=False)
            answers.append(response.status)
            time.sleep(rng.uniform(0.05, 0.3))

    def test_states_agree_after_concurrent_requests(self):
        servers = [self._create_server(name='s%d' % i, host=host, networks='none')
                   for i, host in enumerate(self.TARGETS * 2)]
        # Every lifecycle step yields, so requests land between any two steps.
        balancer = service.LoadBalancer(drs_conf.CONF, self.nova, self.drs_db,
                                        catalog.by_name(self.POLICY), self.power,
                                        crash_point=lambda name: time.sleep(0))
        stop, go, answers = threading.Event(), threading.Event(), []
        workers = [threading.Thread(target=self.worker, args=(seed, stop, go, answers))
                   for seed in range(self.THREADS)]
        for thread in workers:
            thread.start()
        try:
            for cycle in range(self.CYCLES):
                # Bursts of requests, then two quiet cycles in which started
                # suspends and wakes can complete (so later bursts race them).
                if cycle % 3 == 0:
                    go.set()
                else:
                    go.clear()
                self.run_one(balancer)
        finally:
            stop.set()
            for thread in workers:
                thread.join()
        for _ in range(12):     # let every started transition finish
            if not set(drs_hosts.states(self.drs_db).values()) & lifecycle.ADVANCING:
                break
            self.run_one(balancer)

        figures = 'requests %d (%d accepted, %d refused), power commands %s' % (
            len(answers), answers.count(202), answers.count(409),
            dict(collections.Counter(kind for kind, _host in self.power.calls)))
        self.assertGreater(len(answers), 50, figures)
        self.assertEqual(set(), set(answers) - {202, 409}, answers)
        self.assertIn(202, answers, figures)
        self.assertIn(('suspend',), {call[:1] for call in self.power.calls}, figures)
        states = drs_hosts.states(self.drs_db)
        self.assertEqual(set(), set(states.values()) - {'active', 'suspended'}, states)
        for host, state in states.items():
            service_row = self.admin_api.get_services(binary='nova-compute', host=host)[0]
            expected = ('enabled', 'on') if state == 'active' else ('disabled', 'off')
            power = 'off' if host in self.power.off else 'on'
            self.assertEqual(expected, (service_row['status'], power), (host, state))
            if state == 'suspended':
                self.assertEqual([], self.nova.servers_on_host(host))
        self.assertEqual([], drs_migrations.open_requests(self.drs_db))
        for server in servers:
            self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])
            self.assertEqual('active', states[self.server_host(server['id'])])

    def run_one(self, balancer):
        summary = self.cycle(balancer)
        for host in list(self.power.waking):
            self.power.come_back(host)
        return summary
