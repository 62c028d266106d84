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

"""Whole daemon cycles on real nova: consolidate, suspend, wake, rebalance."""

import json
import time

from nova_drs import conf as drs_conf
from nova_drs.daemon import coordination
from nova_drs.daemon import service
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import models
from nova_drs.db import plans as db_plans
from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from tests.functional import base
from tests.functional import daemon_support


class DaemonTestBase(base.DrsFunctionalTestCase):
    # Live migrations finish at once (FakeLiveMigrateDriver waits 5 s each);
    # 10 vCPUs per host so that utilisation matters.
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'
    POLICY = 'drs'
    #: The aggregate every compute host is in, and its metadata (none: the
    #: aggregate does not opt its hosts in, tests/functional/test_cluster_policy.py).
    AGGREGATE = 'cluster1'
    CLUSTER_METADATA = {'drs_policy': 'power_saving', 'min_active_hosts': '2'}
    EXTRA_FLAGS = {('loadbalancer', 'host_cooldown'): '0', ('quota', 'cores'): '-1',
                   ('quota', 'instances'): '-1'}

    def setUp(self):
        super().setUp()
        self.nova = daemon_support.nova_api_for(self)
        self.power = daemon_support.InProcessHostPower(self)
        aggregate = self.admin_api.post_aggregate(
            {'aggregate': {'name': self.AGGREGATE, 'availability_zone': None}})
        for host in self.COMPUTE_HOSTS:
            self.admin_api.add_host_to_aggregate(aggregate['id'], host)
        if self.CLUSTER_METADATA:
            self.admin_api.post_aggregate_action(aggregate['id'], {'set_metadata': {
                'metadata': self.CLUSTER_METADATA}})
        self.balancer = service.LoadBalancer(drs_conf.CONF, self.nova, self.drs_db,
                                             catalog.by_name(self.POLICY), self.power)

    def cycle(self, balancer=None):
        """One cycle of ``balancer`` (the test's own by default), once the moves it
        started have settled; its summary."""
        summary = (balancer or self.balancer).run_cycle()
        daemon_support.settle(self.nova)
        return summary

    def state(self, host):
        return drs_hosts.get(self.drs_db, host)['suspend_state']

    def cycle_until(self, host, state, most):
        """Cycles, ``most`` at the most, until ``host`` is in ``state`` (none if it
        already is); it must be by then."""
        for _ in range(most):
            if self.state(host) == state:
                break
            self.cycle()
        self.assertEqual(state, self.state(host))

    def count_service_listings(self):
        """A list that gets, for each cycle from now on, how many times it
        listed nova's compute services."""
        counts, listing, run_cycle = [], self.nova.compute_services, self.balancer.run_cycle

        def counted_listing():
            counts[-1] += 1
            return listing()

        def counted_cycle(*args, **kwargs):
            counts.append(0)
            return run_cycle(*args, **kwargs)

        self.nova.compute_services = counted_listing
        self.balancer.run_cycle = counted_cycle
        return counts

    def quiet_host1(self, server=None):
        """One nearly idle server on host1 (``server``, already there, or a new
        one), busier ones on host2 and host3."""
        server = server or self._create_server(name='a1', host='host1', networks='none')
        others = [self._create_server(name='b%d' % i, host=h, networks='none')
                  for i, h in enumerate(('host2', 'host3'))]
        load = {s['id']: (self.server_host(s['id']), 5.0 if s is server else 40.0)
                for s in [server] + others}
        daemon_support.record_load(self.drs_db, {'host1': 1.0, 'host2': 10.0, 'host3': 10.0},
                                   load)
        return server, others


class TestUnderload(DaemonTestBase):

    def test_idle_host_is_emptied_and_suspended(self):
        servers = {
            'host1': [self._create_server(name='a1', host='host1', networks='none')],
            'host2': [self._create_server(name='b%d' % i, host='host2', networks='none')
                      for i in range(2)],
            'host3': [self._create_server(name='c%d' % i, host='host3', networks='none')
                      for i in range(2)],
        }
        instance_load = {s['id']: (host, 5.0 if host == 'host1' else 40.0)
                         for host, group in servers.items() for s in group}
        daemon_support.record_load(self.drs_db, {'host1': 1.0, 'host2': 10.0, 'host3': 10.0},
                                   instance_load)
        listings = self.count_service_listings()
        for _ in range(8):
            summary = self.cycle()
            if self.state('host1') == 'suspended':
                break
        self.assertEqual('suspended', self.state('host1'), summary)
        # nova's services are listed once by a cycle with nothing under way
        # (the first), twice while moves or a suspend are (phase 3 re-reads
        # what phase 2 changed), once again when all is done.
        self.assertEqual(1, listings[0])
        self.assertEqual(2, listings[1])
        self.cycle()
        self.assertEqual(1, listings[-1])
        self.assertEqual({'host2', 'host3'}, {self.state(h) and h for h in ('host2', 'host3')
                                              if self.state(h) == 'active'})
        self.assertEqual([], self.nova.servers_on_host('host1'))
        for group in servers.values():
            for server in group:
                self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])
        self.assertEqual('disabled', self.admin_api.get_services(
            binary='nova-compute', host='host1')[0]['status'])
        self.assertEqual([('suspend', 'host1')], self.power.calls)
        new = self._create_server(name='new', networks='none')
        self.assertNotEqual('host1', self.server_host(new['id']))


class TestOverload(DaemonTestBase):

    def test_load_rise_wakes_suspended_host_and_rebalances(self):
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'big', 'vcpus': 6, 'ram': 512, 'disk': 1}})
        servers = [self._create_server(name='s%d' % i, host=host, networks='none',
                                       flavor_id=flavor['id'])
                   for i, host in enumerate(('host2', 'host2', 'host3', 'host3'))]
        quiet = {s['id']: (self.server_host(s['id']), 10.0) for s in servers}
        daemon_support.record_load(self.drs_db, {'host1': 1.0, 'host2': 10.0, 'host3': 10.0},
                                   quiet)
        for _ in range(5):
            self.cycle()
            if self.state('host1') == 'suspended':
                break
        self.assertEqual('suspended', self.state('host1'))
        self.assertEqual(['active', 'active'], [self.state('host2'), self.state('host3')])

        busy = {uuid: (host, 100.0) for uuid, (host, _) in quiet.items()}
        daemon_support.record_load(self.drs_db, {'host2': 100.0, 'host3': 100.0}, busy)
        summary = self.cycle()
        self.assertEqual('waking', self.state('host1'), summary)
        self.assertEqual(['wake'], [a.kind for a in summary['actions']
                                    if a.host == 'host1'])
        self.cycle()        # the host lifecycle sends the wake command
        self.assertIn(('wake', 'host1'), self.power.calls)
        self.power.come_back('host1')
        daemon_support.record_load(self.drs_db, {'host1': 1.0}, {})
        for _ in range(5):
            self.cycle()
            if self.nova.servers_on_host('host1'):
                break
        self.assertEqual('active', self.state('host1'))
        self.assertEqual('enabled', self.admin_api.get_services(
            binary='nova-compute', host='host1')[0]['status'])
        self.assertTrue(self.nova.servers_on_host('host1'), 'nothing rebalanced onto host1')
        for server in servers:
            self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])


class TestFaults(DaemonTestBase):

    def test_unreachable_nova_skips_the_cycle(self):
        from keystoneauth1 import noauth
        from keystoneauth1 import session as ks_session
        from openstack import connection

        from nova_drs.clients import nova_api
        self.balancer.nova = nova_api.NovaAPI(connection.Connection(
            session=ks_session.Session(auth=noauth.NoAuth()),
            compute_endpoint_override='http://127.0.0.1:9/v2.1',
            placement_endpoint_override='http://127.0.0.1:9/placement'))
        for host in self.COMPUTE_HOSTS:
            drs_hosts.ensure(self.drs_db, host)
        summary = self.balancer.run_cycle()
        self.assertIn('skipped', summary)
        self.assertIn('127.0.0.1:9', summary['skipped'])
        self.assertEqual({'host1': 'active', 'host2': 'active', 'host3': 'active'},
                         drs_hosts.states(self.drs_db))

    def test_hosts_without_fresh_statistics_are_left_alone(self):
        self._create_server(name='a', host='host1', networks='none')
        summary = self.cycle()
        self.assertEqual(['host1', 'host2', 'host3'], sorted(summary['stale_hosts']))
        self.assertEqual([], summary['actions'])
        self.assertEqual([], self.power.calls)

    def test_invalid_cluster_metadata_warns_once(self):
        aggregate = self.admin_api.api_get('/os-aggregates').body['aggregates'][0]
        self.admin_api.post_aggregate_action(aggregate['id'], {'set_metadata': {
            'metadata': {'min_active_hosts': 'many', 'drs_automation': 'chaos'}}})
        daemon_support.record_load(self.drs_db, {h: 10.0 for h in self.COMPUTE_HOSTS}, {})
        self.cycle()
        self.cycle()
        log = self.stdlog.logger.output
        self.assertEqual(1, log.count("ignoring invalid metadata min_active_hosts='many'"))
        self.assertEqual(1, log.count("ignoring invalid metadata drs_automation='chaos'"))


class Crash(BaseException):
    """Stands for the leader process dying (not an Exception: nothing catches it)."""


class TestHighAvailability(DaemonTestBase):
    """Two daemons on Redis: the leader dies mid-cycle, the standby finishes the job."""

    EXTRA_FLAGS = {**DaemonTestBase.EXTRA_FLAGS,
                   ('drs_coordination', 'backend_url'): 'redis://127.0.0.1:6379?db=1',
                   # A lease long enough that a loaded test machine does not
                   # miss a heartbeat; the takeover is still bounded below.
                   ('drs_coordination', 'leader_timeout'): '6',
                   ('drs_coordination', 'heartbeat_interval'): '1.5'}

    def test_standby_takes_over_without_repeating_migrations(self):
        from tests import services
        services.require('redis')
        group = 'nova-drs-test-%s' % self.state_dir.rsplit('-', 1)[-1]

        def daemon(name, crash_at=None):
            coordinator = coordination.Coordinator(drs_conf.CONF, member_id=name, group=group)
            coordinator.start()

            def crash_point(point):
                if point == crash_at:
                    raise Crash(point)
            return coordinator, service.LoadBalancer(
                drs_conf.CONF, self.nova, self.drs_db, catalog.by_name(self.POLICY),
                self.power, coordinator, crash_point=crash_point)

        server, others = self.quiet_host1()
        leader_coordinator, leader = daemon('leader', crash_at='suspend:migration-requested')
        standby_coordinator, standby = daemon('standby')
        self.addCleanup(standby_coordinator.stop)
        self.assertTrue(leader_coordinator.is_leader())
        self.assertEqual({'role': 'standby'}, standby.run_cycle())

        leader.run_cycle()                      # plans: host1 -> suspending
        self.assertEqual('suspending', self.state('host1'))
        self.assertRaises(Crash, leader.run_cycle)  # dies right after asking nova to move
        # What a SIGKILL leaves behind: no more heartbeats, the lock still in Redis.
        leader_coordinator._stopping.set()
        leader_coordinator._heart.join()
        died = time.monotonic()

        took_over = None
        for _ in range(80):
            # From the start of the cycle that won the lock: how long that
            # cycle then runs is the machine's load, not the failover's.
            started = time.monotonic()
            summary = self.cycle(standby)
            if took_over is None and summary != {'role': 'standby'}:
                took_over = started - died
            if self.state('host1') == 'suspended':
                break
            time.sleep(0.2)
        self.assertEqual('suspended', self.state('host1'))
        self.assertIsNotNone(took_over)
        self.assertLess(took_over, 2 * 6 + 1)   # within two lease periods
        migrations = [m for m in self.admin_api.api_get('/os-migrations').body['migrations']
                      if m['instance_uuid'] == server['id']]
        self.assertEqual(1, len(migrations), migrations)
        self.assertNotEqual('host1', self.server_host(server['id']))
        self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])


class TestAdminRequests(DaemonTestBase):
    """What admins ask through the API, carried out by the daemon."""

    CLUSTER_METADATA = {'drs_policy': 'none'}   # only admin requests act here

    def run_until(self, predicate, limit=12):
        for _ in range(limit):
            self.cycle()
            for host in list(self.power.waking):
                self.power.come_back(host)
            if predicate():
                return
        self.fail('condition not reached; states %s' % drs_hosts.states(self.drs_db))

    def test_suspend_and_unsuspend_through_the_api(self):
        server = self._create_server(name='a', host='host1', networks='none')
        response = self.admin_api.api_post('/loadbalancer/action',
                                           {'suspend_host': {'host': 'host1'}})
        self.assertEqual(202, response.status)
        self.run_until(lambda: self.state('host1') == 'suspended')
        self.assertIn(self.server_host(server['id']), ('host2', 'host3'))
        self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])
        shown = self.admin_api.api_get('/loadbalancer/host1').body
        self.assertEqual('suspended', shown['host']['suspend_state'])

        self.admin_api.api_post('/loadbalancer/action', {'unsuspend_host': {'host': 'host1'}})
        self.run_until(lambda: self.state('host1') == 'active')
        self.assertEqual('enabled', self.admin_api.get_services(
            binary='nova-compute', host='host1')[0]['status'])

    def test_wake_test_round_trip(self):
        response = self.admin_api.api_post('/loadbalancer/action',
                                           {'wake_test': {'host': 'host2'}})
        request_id = response.body['request']['id']

        def finished():
            with self.drs_db.reader() as session:
                row = session.get(models.LbRequest, request_id)
                return row.status in ('done', 'failed') and row
        self.run_until(finished)
        self.assertEqual(('done', 'suspended and woke up'),
                         (finished().status, finished().result))
        self.assertEqual([('suspend', 'host2'), ('wake', 'host2')],
                         [c for c in self.power.calls if c[1] == 'host2'][:2])
        self.assertEqual('active', self.state('host2'))


class TestOvercommitUpkeep(DaemonTestBase):
    CLUSTER_METADATA = {'drs_policy': 'none', 'cpu_allocation_ratio': '2.0'}

    def vcpu_ratio(self, host):
        hypervisor = [h for h in self.nova.hypervisors() if h['service']['host'] == host][0]
        inventories = self.placement.get(
            '/resource_providers/%s/inventories' % hypervisor['id']).body['inventories']
        return inventories['VCPU']['allocation_ratio']

    def test_each_cycle_pushes_aggregate_ratios_into_placement(self):
        self.assertNotEqual(2.0, self.vcpu_ratio('host1'))
        self.cycle()
        self.assertEqual([2.0, 2.0, 2.0], [self.vcpu_ratio(h) for h in self.COMPUTE_HOSTS])


class TestManualMode(DaemonTestBase):
    EXTRA_FLAGS = {**DaemonTestBase.EXTRA_FLAGS, ('loadbalancer', 'automation'): 'manual'}

    def test_plan_waits_for_approval(self):
        server, others = self.quiet_host1()
        self.cycle()
        plan = self.admin_api.api_get('/loadbalancer/plan').body['plan']
        self.assertEqual('pending', plan['status'])
        self.assertIn('suspend', [a['type'] for a in plan['actions']])
        self.assertEqual({'host1': 'active', 'host2': 'active', 'host3': 'active'},
                         drs_hosts.states(self.drs_db))
        self.assertEqual('host1', self.server_host(server['id']))

        self.admin_api.api_post('/loadbalancer/plan/action',
                                {'approve': {'plan_id': plan['id']}})
        for _ in range(6):
            self.cycle()
            if 'suspended' in drs_hosts.states(self.drs_db).values():
                break
        self.assertIn('suspended', drs_hosts.states(self.drs_db).values())
        for each in [server] + others:
            self.assertEqual('ACTIVE', self.admin_api.get_server(each['id'])['status'])


    def decide(self, decision, plan_id):
        """(status, body) of approving or rejecting a plan, whatever the status."""
        response = self.admin_api.api_request(
            '/loadbalancer/plan/action', method='POST',
            body=json.dumps({decision: {'plan_id': plan_id}}), check_response_status=None)
        return response.status_code, response.json()

    def test_an_unchanged_plan_keeps_its_id_and_a_superseded_one_is_409(self):
        """Issue 31: the id an operator read is the one the next cycles keep."""
        self.quiet_host1()
        # A pending plan of the cluster built on an older view: this cycle's differs.
        older = db_plans.save(self.drs_db, db_plans.MANUAL, [db_plans.Action(
            model.Wake('host3', 'an older view'), 'cluster1', db_plans.MANUAL)],
            'pending', cluster='cluster1')
        self.cycle()
        plan = self.admin_api.api_get('/loadbalancer/plan').body['plan']
        self.assertEqual(('cluster1', 'pending'), (plan['cluster'], plan['status']))
        self.assertGreater(plan['id'], older)
        self.cycle()
        self.cycle()
        again = self.admin_api.api_get('/loadbalancer/plan').body['plan']
        self.assertEqual((plan['id'], 'pending', plan['actions']),
                         (again['id'], again['status'], again['actions']))
        pending = self.admin_api.api_get('/loadbalancer/plans?status=pending').body['plans']
        self.assertEqual([plan['id']], [p['id'] for p in pending])
        self.assertEqual('superseded', db_plans.get(self.drs_db, older)['status'])
        for decision in ('approve', 'reject'):
            status, body = self.decide(decision, older)
            self.assertEqual(409, status, body)
            self.assertIn('plan %d was superseded by plan %d' % (older, plan['id']),
                          body['conflictingRequest']['message'])
        status, body = self.decide('approve', plan['id'])
        self.assertEqual((202, 'approved'), (status, body['plan']['status']), body)


class TestClusterManualMode(TestManualMode):
    """The same, with manual automation set on the cluster's aggregate only."""

    EXTRA_FLAGS = DaemonTestBase.EXTRA_FLAGS
    CLUSTER_METADATA = dict(DaemonTestBase.CLUSTER_METADATA, drs_automation='manual')


class TestClusterThresholds(DaemonTestBase):
    """oVirt-style per-cluster thresholds reach the decision core."""

    CLUSTER_METADATA = dict(DaemonTestBase.CLUSTER_METADATA, low_utilization='0')

    def test_low_utilization_zero_means_no_consolidation(self):
        self.quiet_host1()
        for _ in range(2):
            summary = self.cycle()
            self.assertEqual([], summary['actions'])
        self.assertEqual({'host1': 'active', 'host2': 'active', 'host3': 'active'},
                         drs_hosts.states(self.drs_db))
