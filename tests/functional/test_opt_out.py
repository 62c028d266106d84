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

"""Per-server opt-out (``drs:automation``) and the one migration cooldown, on real nova."""

import json

from nova.tests.functional.api import client as api_client

from nova_drs import conf as drs_conf
from nova_drs.daemon import cloud_view
from nova_drs.daemon import service
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import plans
from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from tests.functional import api_base
from tests.functional import daemon_support
from tests.functional import test_cli_nova
from tests.functional import test_cli_openstack
from tests.functional import test_daemon_cycle

KEY = 'drs:automation'
#: The operator trusts server metadata too (the default is the flavor only).
TRUST_METADATA = {('loadbalancer', 'opt_out_sources'): ['flavor_extra_spec',
                                                        'server_metadata']}


class OptOutBase(test_daemon_cycle.DaemonTestBase):
    """host1 and host2 each hold one nearly idle server, host3 a busy one: without
    an opt-out both quiet hosts are emptied and suspended (floor of one host)."""

    CLUSTER_METADATA = {'drs_policy': 'power_saving', 'min_active_hosts': '1'}
    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS, **TRUST_METADATA}

    def quiet_pair(self, flavor_id=None, metadata=None):
        pinned = self._create_server(name='pinned', host='host1', networks='none',
                                     flavor_id=flavor_id)
        if metadata:
            self.admin_api.post_server_metadata(pinned['id'], metadata)
        free = self._create_server(name='free', host='host2', networks='none')
        busy = self._create_server(name='busy', host='host3', networks='none')
        daemon_support.record_load(
            self.drs_db, {'host1': 1.0, 'host2': 1.0, 'host3': 10.0},
            {pinned['id']: ('host1', 5.0), free['id']: ('host2', 5.0),
             busy['id']: ('host3', 40.0)})
        return pinned, free

    def run_until_host2_suspended(self):
        self.planned, summaries = [], []
        for _ in range(8):
            summary = self.cycle()
            summaries.append(summary)
            self.planned.extend(summary.get('actions', ()))
            if self.state('host2') == 'suspended':
                return summary
        self.fail('host2 was never suspended: %s; cycles: %s'
                  % (drs_hosts.states(self.drs_db), summaries))

    def assertKeptWhereItIs(self, pinned):
        """Never planned (the lifecycle's own refusal is a second line only)."""
        self.assertEqual([], [a for a in self.planned if a.host == 'host1'
                              or a.instance == pinned['id']])
        self.assertEqual('active', self.state('host1'))
        self.assertEqual('host1', self.server_host(pinned['id']))
        self.assertNotIn(('suspend', 'host1'), self.power.calls)
        self.assertEqual('enabled', self.admin_api.get_services(
            binary='nova-compute', host='host1')[0]['status'])

    def call(self, method, path, body=None):
        response = self.admin_api.api_request(
            path, method=method, body=json.dumps(body) if body is not None else None,
            check_response_status=None)
        return response.status_code, response.json() if response.content else None


class TestServerMetadataOptOut(OptOutBase):

    def assertKeptThroughASuspend(self, level):
        """A server opted out at ``level`` stays where it is while its equal host is
        emptied and suspended."""
        pinned, _free = self.quiet_pair(metadata={KEY: level})
        self.run_until_host2_suspended()
        self.cycle()
        self.assertKeptWhereItIs(pinned)

    def test_disabled_server_keeps_its_host_on_while_an_equal_host_is_suspended(self):
        self.assertKeptThroughASuspend('disabled')

    def test_invalid_metadata_is_ignored_with_one_warning(self):
        pinned, _free = self.quiet_pair(metadata={KEY: 'sometimes'})
        self.cycle()
        self.cycle()
        view = cloud_view.build_view(self.balancer.observer.fetch(), cloud_view.Rules([]), 600)
        self.assertNotIn(pinned['id'], view.opt_out)
        self.assertEqual([], self.call('GET', '/loadbalancer/host1')[1]['host']['pinned_servers'])
        self.assertEqual(1, self.stdlog.logger.output.count(
            "server %s: ignoring invalid server metadata drs:automation='sometimes'"
            % pinned['id']))

    def test_manual_server_stays_in_an_automatic_cluster(self):
        self.assertKeptThroughASuspend('manual')

    def test_suspend_under_way_is_abandoned_maintenance_moves_everything(self):
        """Opted out after the admin's request was accepted: the lifecycle refuses too."""
        pinned, free = self.quiet_pair(metadata={KEY: 'disabled'})
        self.admin_api.post_server_metadata(free['id'], {KEY: 'disabled'})
        mover = self._create_server(name='mover', host='host2', networks='none')
        for host in self.COMPUTE_HOSTS:
            drs_hosts.ensure(self.drs_db, host)
        self.planned = []
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'test')
        drs_hosts.transition(self.drs_db, 'host2', 'active', 'entering_maintenance', 'test')
        self.cycle()
        record = drs_hosts.get(self.drs_db, 'host1')
        self.assertEqual('active', record['suspend_state'])
        self.assertIn('suspend abandoned: servers opted out of DRS (drs:automation=disabled)'
                      ': %s' % pinned['id'], record['state_reason'])
        self.assertKeptWhereItIs(pinned)
        # Maintenance is the admin's: the opted-out server leaves with the others.
        self.cycle_until('host2', 'maintenance', 4)
        self.assertNotEqual('host2', self.server_host(free['id']))
        self.assertNotEqual('host2', self.server_host(mover['id']))

    def test_host_show_lists_it_suspend_needs_force_maintenance_does_not(self):
        pinned, free = self.quiet_pair(metadata={KEY: 'disabled'})
        self.admin_api.post_server_metadata(free['id'], {KEY: 'manual'})
        status, body = self.call('GET', '/loadbalancer/host1')
        self.assertEqual(200, status, body)
        self.assertEqual([{'id': pinned['id'], 'level': 'disabled'}],
                         body['host']['pinned_servers'])
        self.assertEqual([{'id': free['id'], 'level': 'manual'}], self.call(
            'GET', '/loadbalancer/host2')[1]['host']['pinned_servers'])
        self.assertEqual([], self.call(
            'GET', '/loadbalancer/host3')[1]['host']['pinned_servers'])
        status, body = self.call('POST', '/loadbalancer/action',
                                 {'suspend_host': {'host': 'host1'}})
        self.assertEqual(409, status, body)
        message = body['conflictingRequest']['message']
        self.assertIn('cannot be suspended', message)
        self.assertIn(pinned['id'], message)
        self.assertIn('--force', message)
        self.assertEqual('active', self.state('host1'))
        # Forced: accepted, the reply and the log name the server that moves.
        status, body = self.call('POST', '/loadbalancer/action',
                                 {'suspend_host': {'host': 'host1', 'force': True}})
        self.assertEqual(202, status, body)
        self.assertEqual([pinned['id']], body['opted_out_servers_moved'])
        self.assertEqual('suspending', body['host']['suspend_state'])
        self.assertIn('moves servers opted out of DRS (drs:automation=disabled): %s'
                      % pinned['id'],
                      self.stdlog.logger.output)
        self.assertEqual(202, self.call('POST', '/loadbalancer/action',
                                        {'unsuspend_host': {'host': 'host1'}})[0])
        # Maintenance never needs force: it always evacuates every server.
        status, body = self.call('POST', '/loadbalancer/action',
                                 {'enter_maintenance': {'host': 'host1'}})
        self.assertEqual(202, status, body)
        self.assertEqual([pinned['id']], body['opted_out_servers_moved'])
        self.assertEqual('entering_maintenance', self.state('host1'))
        # A manual server does not block an admin's suspend: the admin approves.
        status, body = self.call('POST', '/loadbalancer/action',
                                 {'suspend_host': {'host': 'host2'}})
        self.assertEqual(202, status, body)


    def test_forced_suspend_moves_the_opted_out_server_and_suspends(self):
        pinned, _free = self.quiet_pair(metadata={KEY: 'disabled'})
        status, body = self.call('POST', '/loadbalancer/action',
                                 {'suspend_host': {'host': 'host1', 'force': True}})
        self.assertEqual(202, status, body)
        self.cycle_until('host1', 'suspended', 6)
        self.assertNotEqual('host1', self.server_host(pinned['id']))
        self.assertIn(('suspend', 'host1'), self.power.calls)


class TestOptOutSources(OptOutBase):
    """``[loadbalancer] opt_out_sources``: by default a project member's server
    metadata counts for nothing; the flavor (an admin's) still does."""

    EXTRA_FLAGS = test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS

    def test_project_member_metadata_blocks_nothing_by_default(self):
        pinned, _free = self.quiet_pair()
        self.api_fixture.api.post_server_metadata(pinned['id'], {KEY: 'disabled'})
        self.assertEqual([], self.call('GET', '/loadbalancer/host1')[1]['host']['pinned_servers'])
        view = cloud_view.build_view(self.balancer.observer.fetch(), cloud_view.Rules([]), 600)
        self.assertNotIn(pinned['id'], view.opt_out)
        status, body = self.call('POST', '/loadbalancer/action',
                                 {'suspend_host': {'host': 'host1'}})
        self.assertEqual(202, status, body)
        self.assertEqual([], body['opted_out_servers_moved'])

    def test_listing_server_metadata_makes_it_count(self):
        pinned, _free = self.quiet_pair()
        self.api_fixture.api.post_server_metadata(pinned['id'], {KEY: 'disabled'})
        self.flags(opt_out_sources=['flavor_extra_spec', 'server_metadata'],
                   group='loadbalancer')
        self.assertEqual([{'id': pinned['id'], 'level': 'disabled'}], self.call(
            'GET', '/loadbalancer/host1')[1]['host']['pinned_servers'])
        view = cloud_view.build_view(self.balancer.observer.fetch(), cloud_view.Rules([]), 600)
        self.assertEqual('disabled', view.opt_out[pinned['id']])
        self.assertEqual(409, self.call('POST', '/loadbalancer/action',
                                        {'suspend_host': {'host': 'host1'}})[0])

    def test_an_empty_list_honours_not_even_the_flavor(self):
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'pinned', 'vcpus': 1, 'ram': 512, 'disk': 1}})
        self.admin_api.post_extra_spec(flavor['id'], {'extra_specs': {KEY: 'disabled'}})
        pinned, _free = self.quiet_pair(flavor_id=flavor['id'])
        self.assertEqual([{'id': pinned['id'], 'level': 'disabled'}], self.call(
            'GET', '/loadbalancer/host1')[1]['host']['pinned_servers'])
        self.flags(opt_out_sources=[], group='loadbalancer')
        self.assertEqual([], self.call('GET', '/loadbalancer/host1')[1]['host']['pinned_servers'])


class TestFlavorExtraSpecOptOut(OptOutBase):

    def test_disabled_flavor_keeps_its_host_on(self):
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'pinned', 'vcpus': 1, 'ram': 512, 'disk': 1}})
        self.admin_api.post_extra_spec(flavor['id'], {'extra_specs': {KEY: 'disabled'}})
        pinned, _free = self.quiet_pair(flavor_id=flavor['id'])
        self.run_until_host2_suspended()
        self.cycle()
        self.assertKeptWhereItIs(pinned)

    def test_invalid_extra_spec_is_refused_by_nova(self):
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'odd', 'vcpus': 1, 'ram': 512, 'disk': 1}})
        error = self.assertRaises(
            api_client.OpenStackApiException, self.admin_api.post_extra_spec,
            flavor['id'], {'extra_specs': {KEY: 'sometimes'}})
        self.assertEqual(400, error.response.status_code)
        self.assertIn('not one of: disabled, manual', error.response.text)

    def test_server_metadata_wins_over_the_flavor(self):
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'pinned', 'vcpus': 1, 'ram': 512, 'disk': 1}})
        self.admin_api.post_extra_spec(flavor['id'], {'extra_specs': {KEY: 'disabled'}})
        pinned, _free = self.quiet_pair(flavor_id=flavor['id'], metadata={KEY: 'manual'})
        self.assertEqual([{'id': pinned['id'], 'level': 'manual'}], self.call(
            'GET', '/loadbalancer/host1')[1]['host']['pinned_servers'])


class TestManualServerInManualCluster(OptOutBase):
    CLUSTER_METADATA = {'drs_policy': 'power_saving', 'min_active_hosts': '1',
                        'drs_automation': 'manual'}

    def test_manual_server_appears_in_the_pending_plan_disabled_does_not(self):
        manual, free = self.quiet_pair(metadata={KEY: 'manual'})
        self.admin_api.post_server_metadata(free['id'], {KEY: 'disabled'})
        self.cycle()
        plan = self.admin_api.api_get('/loadbalancer/plan').body['plan']
        self.assertEqual('pending', plan['status'])
        moved = {a.get('instance') for a in plan['actions'] if a['type'] == 'migrate'}
        suspended = {a.get('host') for a in plan['actions'] if a['type'] == 'suspend'}
        self.assertIn(manual['id'], moved)
        self.assertIn('host1', suspended)
        self.assertNotIn(free['id'], moved)
        self.assertNotIn('host2', suspended)


class TestOneCooldown(test_daemon_cycle.DaemonTestBase):
    """A server an admin live-migrated through nova (not DRS) is not planned for a
    move within [loadbalancer] migration_cooldown; outside it, it is."""

    def migrated_by_admin_to_host1(self):
        server = self._create_server(name='a1', host='host2', networks='none')
        self._live_migrate(server, api=self.admin_api, host='host1')
        self.assertEqual('host1', self.server_host(server['id']))
        return self.quiet_host1(server)[0]

    def planned_moves(self):
        balancer = service.LoadBalancer(drs_conf.CONF, self.nova, self.drs_db,
                                        catalog.by_name(self.POLICY), self.power)
        summary = balancer.run_cycle(dry_run=True)
        return {a.instance for a in summary['actions'] if a.kind == 'migrate'}

    def test_within_the_cooldown_it_stays_outside_it_moves(self):
        server = self.migrated_by_admin_to_host1()
        self.flags(migration_cooldown=3600, group='loadbalancer')
        self.assertNotIn(server['id'], self.planned_moves())
        self.flags(migration_cooldown=0, group='loadbalancer')
        self.assertIn(server['id'], self.planned_moves())


class TestPinnedServersInCLIs(test_cli_nova.CliMixin, api_base.ServersApiTestCase):
    """``nova lb-host-show`` and ``openstack drs host show`` print pinned_servers."""

    EXTRA_FLAGS = {**api_base.ServersApiTestCase.EXTRA_FLAGS, **TRUST_METADATA}
    nova = test_cli_nova.TestNovaShell.nova
    openstack = test_cli_openstack.TestOpenStackShell.openstack
    osc_auth_args = staticmethod(test_cli_openstack.TestOpenStackShell.osc_auth_args)

    def test_both_shells_print_the_opted_out_servers(self):
        server = self._create_server(name='pinned', host='host1', networks='none')
        self.admin_api.post_server_metadata(server['id'], {KEY: 'disabled'})
        code, out, err = self.nova('lb-host-show', 'host1')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'\| pinned_servers +\| %s \(disabled\)' % server['id'])
        test_cli_openstack.osc_environment(self)
        code, out, err = self.openstack('drs', 'host', 'show', 'host1', '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual('%s (disabled)' % server['id'], json.loads(out)['pinned_servers'])


    def test_both_shells_suspend_a_host_with_an_opted_out_server_only_with_force(self):
        server = self._create_server(name='pinned', host='host1', networks='none')
        self.admin_api.post_server_metadata(server['id'], {KEY: 'disabled'})
        code, out, err = self.nova('lb-suspend', 'host1')
        self.assertNotEqual(0, code)
        self.assertIn('--force', err)
        code, out, err = self.nova('lb-suspend', '--force', 'host1')
        self.assertEqual(0, code, err)
        self.assertIn('opted out of DRS (drs:automation=disabled) that move too: %s'
                      % server['id'], out)
        self.assertEqual(202, self.admin_api.api_request(
            '/loadbalancer/action', method='POST',
            body=json.dumps({'unsuspend_host': {'host': 'host1'}})).status_code)
        test_cli_openstack.osc_environment(self)
        code, out, err = self.openstack('drs', 'host', 'suspend', 'host1')
        self.assertNotEqual(0, code)
        self.assertIn('--force', err)
        code, out, err = self.openstack('drs', 'host', 'suspend', '--force', 'host1')
        self.assertEqual(0, code, err)
        self.assertIn('that move too: %s' % server['id'], err)


class TestOrchestratorGuard(test_daemon_cycle.DaemonTestBase):
    """Moves planned before a server opted out (e.g. an approved plan) are refused."""

    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS, **TRUST_METADATA}

    def test_disabled_never_moves_manual_only_from_an_approved_plan(self):
        servers = {level: self._create_server(name=level, host='host1', networks='none')
                   for level in ('disabled', 'manual')}
        for level, server in servers.items():
            self.admin_api.post_server_metadata(server['id'], {KEY: level})
        daemon_support.record_load(self.drs_db, {h: 10.0 for h in self.COMPUTE_HOSTS},
                                   {s['id']: ('host1', 10.0) for s in servers.values()})
        view = cloud_view.build_view(self.balancer.observer.fetch(), cloud_view.Rules([]), 600)

        def move(level, automation, destination):
            return plans.Action(model.Migrate(servers[level]['id'], 'host1', destination,
                                              'overload'), 'cluster1', automation)

        result = self.balancer.orchestrator.execute(
            [move('disabled', 'manual', 'host2'), move('manual', 'automatic', 'host3')], view)
        self.assertEqual(0, result['started'], result)
        self.assertEqual(['instance opted out (drs:automation=disabled)',
                          'instance opted out (drs:automation=manual)'],
                         [why for _action, why in result['skipped']])
        result = self.balancer.orchestrator.execute([move('manual', 'manual', 'host3')], view)
        self.assertEqual(1, result['started'], result)
