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

"""Maintenance that finishes, on real nova: the last active host enters
maintenance by waking a suspended one, failed moves back off, and the exit
is over once nova-compute is enabled again (what ``--wait`` waits for)."""

import datetime
import time
import types

import fixtures
import sqlalchemy as sa

from nova_drs import cluster_policy
from nova_drs.daemon import budget as budget_mod
from nova_drs.daemon import lifecycle
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import models
from tests.functional import daemon_support
from tests.functional import test_lifecycle
from tests.functional import test_maintenance

LIMITS = {'per_host': 2, 'per_destination': 2, 'per_cluster': 10,
          'suspends_per_cycle': 1, 'wakes_per_cycle': 1}


class TestMaintenanceFinishes(test_lifecycle.LifecycleTestBase):

    def setUp(self):
        super().setUp()
        # Real seconds for the retries: the test waits them out.
        self.useFixture(fixtures.MonkeyPatch('nova_drs.daemon.evacuation.FIRST_RETRY',
                                             datetime.timedelta(seconds=2)))
        self.useFixture(fixtures.MonkeyPatch('nova_drs.daemon.evacuation.LAST_RETRY',
                                             datetime.timedelta(seconds=8)))
        self.server = self.boot_on('host1', 'only')
        for host in ('host2', 'host3'):
            drs_hosts.transition(self.drs_db, host, 'active', 'suspending', 'test')
            self.run_cycles(host, 'suspended')

    def cycle(self, wakes_per_cycle=1, receivers_known=True, woken_first=False):
        """One lifecycle step of every host in a transition, in one cycle's budget
        built as the daemon builds it (budget_mod.receivers_of the cycle's view);
        without ``receivers_known`` nova alone says where servers can go;
        ``woken_first``: hosts in reverse name order, so a woken host (host2,
        host3) steps before host1, as compute1 before compute2 did on the
        mini-cloud."""
        services = {s['host']: s for s in self.admin_api.get_services(binary='nova-compute')}
        records = {r['host']: r for r in drs_hosts.list_all(self.drs_db)}
        receivers = budget_mod.receivers_of(types.SimpleNamespace(
            services=services, records=records)) if receivers_known else None
        budget = budget_mod.Budget(
            dict(LIMITS, wakes_per_cycle=wakes_per_cycle),
            lambda host: cluster_policy.DEFAULT_CLUSTER, (), receivers)
        step = daemon_support.host_lifecycle(self)
        step.budget = budget
        for record in sorted(records.values(), key=lambda r: r['host'], reverse=woken_first):
            if record['suspend_state'] in lifecycle.ADVANCING:
                step.advance(record)
        self.wait_for_quiet()

    def state(self, host):
        return drs_hosts.get(self.drs_db, host)['suspend_state']

    def requests(self):
        """Every move of the server the daemon asked nova for, failed ones
        included (the oscillation guard's count leaves those out)."""
        table = models.LbMigration.__table__
        with self.drs_db.reader() as session:
            return session.scalar(sa.select(sa.func.count()).where(
                table.c.instance_uuid == self.server['id']))

    def test_the_last_active_host_enters_maintenance_by_waking_one(self):
        test_maintenance.enter(self, 'host1')
        self.cycle()       # no other host can receive: one host woken, not two
        states = (self.state('host2'), self.state('host3'))
        self.assertEqual(['waking', 'suspended'], sorted(states, reverse=True))
        woken = 'host2' if states[0] == 'waking' else 'host3'
        shown = self.admin_api.api_get('/loadbalancer/host1').body['host']
        self.assertEqual('entering_maintenance', shown['suspend_state'])
        self.assertIn('woke %s to make room' % woken, shown['state_reason'])
        self.assertEqual('disabled', shown['compute_service'])

        self.cycle()       # the wake command leaves; host1 waits for it
        self.assertIn(('wake', woken), self.power.calls)
        self.assertIn('waiting for %s to wake to make room' % woken,
                      drs_hosts.get(self.drs_db, 'host1')['state_reason'])
        self.power.come_back(woken)
        for _ in range(20):
            # The cycle the woken host becomes active in, host1 knows it can
            # receive: it does not wake the other host too.
            self.cycle(woken_first=True)
            if self.state('host1') == 'maintenance':
                break
            time.sleep(0.3)
        self.assertEqual('maintenance', self.state('host1'))
        self.assertEqual(woken, self.server_host(self.server['id']))
        self.assertEqual('suspended', self.state('host3' if woken == 'host2' else 'host2'))

    def test_failed_moves_back_off(self):
        self.useFixture(fixtures.MonkeyPatch('nova_drs.daemon.evacuation.LAST_RETRY',
                                             datetime.timedelta(seconds=60)))
        test_maintenance.enter(self, 'host1')
        started = time.monotonic()
        for _ in range(12):
            # nova alone says where servers go (nowhere), and nothing may be
            # woken: every move fails.
            self.cycle(wakes_per_cycle=0, receivers_known=False)
        elapsed = time.monotonic() - started
        self.assertEqual('entering_maintenance', self.state('host1'))
        self.assertEqual('host1', self.server_host(self.server['id']))
        # Retried after 2, 4, 8, 16, 32, 60 s: at most one request per elapsed
        # delay, where retrying at once asked every other cycle (6 times in 12).
        delays, waited, bound = iter([2, 4, 8, 16, 32] + [60] * 100), 0, 1
        while True:
            waited += next(delays)
            if waited > elapsed:
                break
            bound += 1
        self.assertLess(bound, 6, 'cycles too slow to tell (%.0f s)' % elapsed)
        self.assertLessEqual(self.requests(), bound)
        self.assertGreaterEqual(self.requests(), 1)
        reason = drs_hosts.get(self.drs_db, 'host1')['state_reason']
        self.assertIn('waking host2 to make room waits: cluster at its wake limit', reason)
        self.assertIn('next try in', reason)

    def test_exit_is_over_once_nova_compute_is_enabled(self):
        for host in ('host2', 'host3'):
            drs_hosts.transition(self.drs_db, host, 'suspended', 'waking', 'test')
            self.cycle()
            self.power.come_back(host)
            self.run_cycles(host, 'active')
        test_maintenance.enter(self, 'host1')
        self.run_cycles('host1', 'maintenance')
        test_maintenance.leave(self, 'host1')

        shown = self.admin_api.api_get('/loadbalancer/host1').body['host']
        # Active for DRS, but the daemon has not re-enabled nova-compute yet:
        # `maintenance exit --wait` goes on waiting.
        self.assertEqual(('active', 'disabled'),
                         (shown['suspend_state'], shown['compute_service']))
        daemon_support.host_lifecycle(self).advance(drs_hosts.get(self.drs_db, 'host1'))
        shown = self.admin_api.api_get('/loadbalancer/host1').body['host']
        self.assertEqual(('active', 'enabled'),
                         (shown['suspend_state'], shown['compute_service']))
