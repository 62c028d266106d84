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

"""scale_server on real nova: in place, moved inside the cluster, refused, retry, revert.

cluster1 = host1 + host2 (drs_scale_enabled, ratios 1.0: 10 vCPUs each);
host3 is outside every cluster with plenty of room, so a resize that leaves
the cluster would land there.
"""

import json
import time

import fixtures

from nova_drs import conf as drs_conf
from nova_drs.scale import executor
from tests.functional import base
from tests.functional import daemon_support
from tests.functional import test_cli_nova
from tests.functional import test_cli_openstack

FILTERS = ('ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,'
           'ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter,SuspendStateFilter,'
           'OvercommitCoreFilter,OvercommitRamFilter,ResourceConsumersFilter')


def scale_cycle(nova, database):
    """The scale step of one daemon cycle, on what its observe lists."""
    return executor.advance_scale_requests(nova, database, drs_conf.CONF, nova.aggregates(),
                                           nova.hypervisors())


class ScaleTestBase(base.DrsFunctionalTestCase):
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'
    ENABLED_FILTERS = FILTERS + ',ScaleTargetFilter'
    EXTRA_FLAGS = {('drs_scale', 'enabled'): 'true', ('quota', 'cores'): '-1',
                   ('quota', 'instances'): '-1', ('quota', 'ram'): '-1',
                   ('DEFAULT', 'allow_resize_to_same_host'): 'true'}

    def _apply_operator_config(self):
        self.EXTRA_FLAGS = dict(self.EXTRA_FLAGS)
        self.EXTRA_FLAGS[('filter_scheduler', 'enabled_filters')] = self.ENABLED_FILTERS
        super()._apply_operator_config()

    def setUp(self):
        super().setUp()
        self.nova = daemon_support.nova_api_for(self)
        aggregate = self.admin_api.post_aggregate(
            {'aggregate': {'name': 'cluster1', 'availability_zone': None}})
        for host in ('host1', 'host2'):
            self.admin_api.add_host_to_aggregate(aggregate['id'], host)
        self.admin_api.post_aggregate_action(aggregate['id'], {'set_metadata': {'metadata': {
            'drs_scale_enabled': 'true', 'cpu_allocation_ratio': '1.0',
            'ram_allocation_ratio': '1.0'}}})
        self.small = self._create_flavor(name='small', vcpu=2, memory_mb=512, disk=1,
                                         ephemeral=0)
        self.big = self._create_flavor(name='big', vcpu=6, memory_mb=1024, disk=1,
                                       ephemeral=0)

    # -- helpers -------------------------------------------------------------
    def call(self, method, path, body=None):
        response = self.admin_api.api_request(
            path, method=method, body=json.dumps(body) if body is not None else None,
            check_response_status=None)
        return response.status_code, response.json() if response.content else None

    def server_on(self, host, flavor=None, scalable=True, name='s'):
        server = self._create_server(name=name, host=host, networks='none',
                                     flavor_id=flavor or self.small)
        if scalable:
            self.admin_api.post_server_metadata(server['id'],
                                                {'dynamically_scalable': 'true'})
        return server

    def request_scale(self, server, flavor='big'):
        status, body = self.call('POST', '/loadbalancer/action',
                                 {'scale_server': {'server': server['id'], 'flavor': flavor}})
        self.assertEqual(202, status, body)
        return body['request']['id']

    def run_until_finished(self, request_id, cycles=30):
        for _ in range(cycles):
            scale_cycle(self.nova, self.drs_db)
            status, body = self.call('GET', '/loadbalancer/requests/%d' % request_id)
            self.assertEqual(200, status, body)
            if body['request']['status'] in ('done', 'failed'):
                return body['request']
            time.sleep(0.3)
        self.fail('scale request %d did not finish: %s' % (request_id, body))

    def flavor_name(self, server):
        return self.admin_api.get_server(server['id'])['flavor']['original_name']

    def set_service(self, host, status):
        service = self.admin_api.get_services(binary='nova-compute', host=host)[0]
        self.admin_api.put_service(service['id'], {'status': status})

    def assertActiveOn(self, server, host, flavor):
        """Where a scale left ``server``: ACTIVE on ``host`` with ``flavor``."""
        self.assertEqual(host, self.server_host(server['id']))
        self.assertEqual(flavor, self.flavor_name(server))
        self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])

    def migration_hosts(self, server):
        return {(m['source_compute'], m['dest_compute'])
                for m in self.nova.migrations(instance_uuid=server['id'])}


class TestAllocationBranches(ScaleTestBase):

    def test_in_place_when_current_host_has_capacity(self):
        server = self.server_on('host1')
        request = self.run_until_finished(self.request_scale(server))
        self.assertEqual('done', request['status'], request)
        self.assertEqual('in_place', request['progress']['decision'])
        self.assertActiveOn(server, 'host1', 'big')
        self.assertEqual({('host1', 'host1')}, self.migration_hosts(server))

    def test_moved_within_cluster_never_outside(self):
        server = self.server_on('host1')
        self.server_on('host1', flavor=self.big, scalable=False, name='filler')
        request = self.run_until_finished(self.request_scale(server))
        self.assertEqual('done', request['status'], request)
        self.assertEqual('move', request['progress']['decision'])
        self.assertEqual(['host2'], request['progress']['targets'])
        self.assertEqual('host2', self.server_host(server['id']))
        self.assertEqual('big', self.flavor_name(server))
        self.assertEqual({('host1', 'host2')}, self.migration_hosts(server))
        self.assertIn('moved host1 -> host2', request['progress']['message'])

    def test_refused_without_capacity_and_nothing_changes(self):
        server = self.server_on('host1')
        self.server_on('host1', flavor=self.big, scalable=False, name='filler1')
        self.server_on('host2', flavor=self.big, scalable=False, name='filler2')
        request = self.run_until_finished(self.request_scale(server))
        self.assertEqual('failed', request['status'])
        self.assertIn('no capacity in cluster cluster1', request['progress']['message'])
        self.assertEqual('host1', self.server_host(server['id']))
        self.assertEqual('small', self.flavor_name(server))
        self.assertEqual(set(), self.migration_hosts(server))


class TestRetry(ScaleTestBase):

    def test_failed_step_is_retried(self):
        server = self.server_on('host1')
        self.server_on('host1', flavor=self.big, scalable=False, name='filler')
        self.set_service('host2', 'disabled')  # the only target: nova finds no host
        request_id = self.request_scale(server)
        scale_cycle(self.nova, self.drs_db)
        self.set_service('host2', 'enabled')
        request = self.run_until_finished(request_id)
        self.assertEqual('done', request['status'], request)
        self.assertEqual(2, request['progress']['attempt'])
        self.assertEqual('host2', self.server_host(server['id']))
        self.assertEqual('big', self.flavor_name(server))

    def test_gives_up_after_scale_retry_and_leaves_server_unchanged(self):
        self.flags(scale_retry=1, group='drs_scale')
        server = self.server_on('host1')
        self.server_on('host1', flavor=self.big, scalable=False, name='filler')
        self.set_service('host2', 'disabled')
        request = self.run_until_finished(self.request_scale(server))
        self.assertEqual('failed', request['status'])
        self.assertEqual(2, request['progress']['attempt'])
        self.assertIn('gave up after 2 attempts', request['progress']['message'])
        self.assertActiveOn(server, 'host1', 'small')


class TestRevertOutsideCluster(ScaleTestBase):
    """ScaleTargetFilter not enabled: nova may pick host3; the daemon reverts."""

    ENABLED_FILTERS = FILTERS

    def test_resize_outside_cluster_is_reverted(self):
        server = self.server_on('host1')
        self.server_on('host1', flavor=self.big, scalable=False, name='filler')
        self.set_service('host2', 'disabled')  # nova's only choice is host3
        request = self.run_until_finished(self.request_scale(server))
        self.assertEqual('failed', request['status'])
        self.assertIn('outside cluster cluster1', request['progress']['message'])
        self.assertActiveOn(server, 'host1', 'small')
        self.assertEqual({('host1', 'host3')}, self.migration_hosts(server))


class TestScaleApiErrors(ScaleTestBase):

    def post(self, server_id, flavor):
        return self.call('POST', '/loadbalancer/action',
                         {'scale_server': {'server': server_id, 'flavor': flavor}})

    def assertFault(self, expected, result, fragment):
        status, body = result
        self.assertEqual(expected, status, body)
        (fault,) = body.values()
        self.assertIn(fragment, fault['message'])

    def test_unknown_server_and_flavor_are_404(self):
        server = self.server_on('host1')
        self.assertFault(404, self.post('00000000-0000-0000-0000-000000000000', 'big'),
                         'server')
        self.assertFault(404, self.post(server['id'], 'no-such-flavor'), 'flavor')
        self.assertFault(404, self.call('GET', '/loadbalancer/requests/999'), 'not found')
        self.assertFault(404, self.call('GET', '/loadbalancer/requests/abc'), 'not found')

    def test_bad_body_is_400(self):
        self.assertFault(400, self.post('not-a-uuid', 'big'), 'server')
        self.assertFault(400, self.call('POST', '/loadbalancer/action',
                                        {'scale_server': {'server': 'x'}}), 'flavor')

    def test_conflicts(self):
        server = self.server_on('host1')
        self.assertFault(409, self.post(server['id'], 'small'), 'same vCPUs')
        tiny = self._create_flavor(name='tiny', vcpu=1, memory_mb=256, disk=1, ephemeral=0)
        self.assertFault(409, self.post(server['id'], tiny), 'allow_scale_down')
        plain = self.server_on('host2', scalable=False, name='plain')
        self.assertFault(409, self.post(plain['id'], 'big'), 'dynamically scalable')
        outside = self.server_on('host3', name='outside')
        self.assertFault(409, self.post(outside['id'], 'big'), 'drs_scale_enabled')
        first = self.post(server['id'], 'big')
        self.assertEqual(202, first[0], first)
        self.assertFault(409, self.post(server['id'], 'big'), 'already being scaled')
        self.flags(enabled=False, group='drs_scale')
        self.assertFault(409, self.post(plain['id'], 'big'), 'disabled')

    def test_server_not_active_is_409(self):
        server = self.server_on('host1')
        self._stop_server(server)
        self.assertFault(409, self.post(server['id'], 'big'), 'only an ACTIVE server')

    def test_non_admin_is_forbidden(self):
        server = self.server_on('host1')
        for method, path, body in (
                ('POST', '/loadbalancer/action',
                 {'scale_server': {'server': server['id'], 'flavor': 'big'}}),
                ('GET', '/loadbalancer/requests/1', None)):
            response = self.api_fixture.api.api_request(
                path, method=method, body=json.dumps(body) if body else None,
                check_response_status=None)
            self.assertEqual(403, response.status_code, response.content)

    def test_daemon_rechecks_a_pending_request(self):
        server = self.server_on('host1')
        request_id = self.request_scale(server)
        self._stop_server(server)
        request = self.run_until_finished(request_id)
        self.assertEqual('failed', request['status'])
        self.assertIn('not ACTIVE', request['progress']['message'])
        self.assertEqual('small', self.flavor_name(server))

    def test_scale_down_when_enabled(self):
        self.flags(allow_scale_down=True, group='drs_scale')
        server = self.server_on('host1', flavor=self.big)
        request = self.run_until_finished(self.request_scale(server, flavor=self.small))
        self.assertEqual('done', request['status'], request)
        self.assertEqual('small', self.flavor_name(server))


class TestScaleCli(test_cli_nova.CliMixin, ScaleTestBase):
    """``nova lb-scale`` and ``openstack drs server scale`` through the real shells."""

    nova = test_cli_nova.TestNovaShell.nova
    openstack = test_cli_openstack.TestOpenStackShell.openstack
    osc_auth_args = staticmethod(test_cli_openstack.TestOpenStackShell.osc_auth_args)

    def daemon_in_background(self):
        def loop(stop):
            while not stop.is_set():
                scale_cycle(self.nova_api, self.drs_db)
                time.sleep(0.2)
        self.in_background(loop)

    def setUp(self):
        super().setUp()
        self.nova_api = self.__dict__.pop('nova')  # ScaleTestBase's NovaAPI; nova = the shell

    def test_nova_lb_scale_by_name_with_wait(self):
        server = self.server_on('host1', name='web1')
        self.daemon_in_background()
        code, out, err = self.nova('lb-scale', 'web1', 'big', '--wait', '--poll-interval',
                                   '0.2')
        self.assertEqual(0, code, err)
        self.assertIn('scaled to big in place on host1', out)
        self.assertEqual('big', self.flavor_name(server))

    def test_nova_lb_scale_refusal_is_one_line(self):
        self.server_on('host1', scalable=False, name='plain')
        code, out, err = self.nova('lb-scale', 'plain', 'big')
        self.assertNotEqual(0, code)
        self.assertIn('not flagged dynamically scalable', err)
        self.assertNotIn('Traceback', err)

    def test_openstack_drs_server_scale_wait(self):
        for name in ('OS_PROJECT_ID', 'OS_AUTH_URL'):
            self.useFixture(fixtures.EnvironmentVariable(name))
        server = self.server_on('host1')
        self.server_on('host1', flavor=self.big, scalable=False, name='filler')
        self.daemon_in_background()
        code, out, err = self.openstack('drs', 'server', 'scale', server['id'], 'big',
                                        '--wait', '--poll-interval', '0.2', '-f', 'json')
        self.assertEqual(0, code, err)
        request = json.loads(out)
        self.assertEqual('done', request['status'])
        self.assertIn('moved host1 -> host2', request['progress']['message'])
        self.assertEqual('host2', self.server_host(server['id']))
