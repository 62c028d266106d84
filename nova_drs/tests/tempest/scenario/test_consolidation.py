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

"""Scenario: the daemon decides by itself, from the load it measured.

Three computes with a few idle servers each join a ``power_saving`` cluster.
One host is kept on by a deny rule, another by a server nova-drs may not
move (flavor extra spec ``drs:automation=disabled``). In ``manual``
automation the daemon's plan to empty and suspend the third host waits until
an admin approves it, then runs. Then the deny rule goes (evacuees nova's
scheduler placed on that host must be free to move) and, back in
``automatic``, every server is made busy (``[nova_drs] busy_metadata``): the
daemon wakes the host and moves servers onto it. Only the approval is an
admin action. Needs a power driver
able to act on the hosts and a way to load servers; skipped when either is
unset.
"""

import datetime
import json
import time

from tempest import config
from tempest.api.compute import api_microversion_fixture
from tempest.common import waiters
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc
from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils

from nova_drs.tests.tempest import base

CONF = config.CONF
SERVERS_PER_HOST = 3
#: nova-drs's default [loadbalancer] migration_cooldown: a host holding a
#: server moved more recently is rightly kept on, so it is not the target.
COOLDOWN = datetime.timedelta(hours=1)


class ConsolidationScenarioTest(base.LoadBalancerTest):

    needs_power_driver = True

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.nova_drs.busy_metadata:
            raise cls.skipException('[nova_drs] busy_metadata is not set: no way to '
                                    'load servers on this cloud')

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.aggregates = cls.os_admin.aggregates_client
        cls.migrations = cls.os_admin.migrations_client
        cls.placement = cls.os_admin.placement_client
        cls.flavors = cls.os_admin.flavors_client

    def setUp(self):
        super().setUp()
        # 2.74: boot on a named host; 2.59+: migrations with their uuid and times.
        self.useFixture(api_microversion_fixture.APIMicroversionFixture(
            compute_microversion='2.74'))

    def _states(self):
        hosts = {h['host']: h for h in self.admin_lb.list_hosts()['hosts']}
        for host, record in hosts.items():
            self.assertNotEqual('error', record['suspend_state'],
                                'host %s went to error: %s' % (host, record['state_reason']))
        return hosts

    def _wait(self, what, probe):
        deadline = time.monotonic() + CONF.nova_drs.state_timeout
        while time.monotonic() < deadline:
            found = probe()
            if found:
                return found
            time.sleep(3)
        self.fail('%s: not within %ds; is nova-loadbalancer running?'
                  % (what, CONF.nova_drs.state_timeout))

    def _computes(self):
        services = self.admin_services.list_services(binary='nova-compute')['services']
        hosts = sorted(s['host'] for s in services
                       if (s['state'], s['status']) == ('up', 'enabled'))
        if len(hosts) < 3:
            raise self.skipException('needs three computes up and enabled: %s' % hosts)
        return hosts

    def _moved_recently(self, host):
        since = (datetime.datetime.now(datetime.timezone.utc) - COOLDOWN).strftime(
            '%Y-%m-%dT%H:%M:%S')
        servers = self.admin_servers.list_servers(detail=True, all_tenants=True,
                                                  host=host)['servers']
        return any(m['created_at'] >= since for s in servers
                   for m in self.migrations.list_migrations(instance_uuid=s['id'])[
                       'migrations'])

    def _roles(self, hosts):
        """(target, denied, pinned): the host to be suspended is one none of
        whose servers moved within the cooldown."""
        for target in hosts:
            if not self._moved_recently(target):
                others = [h for h in hosts if h != target]
                return target, others[0], others[1]
        raise self.skipException('every compute holds a server moved within %s' % COOLDOWN)

    def _opt_in(self, hosts):
        """A power_saving cluster in manual mode; removed at the end (opt-out)."""
        aggregate = self.aggregates.create_aggregate(
            name=data_utils.rand_name('drs-cluster'))['aggregate']
        self.addCleanup(self.aggregates.delete_aggregate, aggregate['id'])
        for host in hosts:
            self.aggregates.add_host(aggregate['id'], host=host)
            self.addCleanup(self.aggregates.remove_host, aggregate['id'], host=host)
        self._automation(aggregate['id'], 'manual')
        return aggregate['id']

    def _automation(self, aggregate, level):
        self.aggregates.set_metadata(aggregate, metadata={
            'drs_policy': 'power_saving', 'drs_automation': level})

    def _keep_on(self, denied, pinned):
        """A deny rule on ``denied``; on ``pinned`` a server nova-drs may not move."""
        rule = self.admin_lb.create_rule('host', '^%s$' % denied, False)['rule']
        self.addCleanup(test_utils.call_and_ignore_notfound_exc, self.admin_lb.delete_rule,
                        rule['id'])
        like = self.flavors.show_flavor(CONF.compute.flavor_ref)['flavor']
        flavor = self.flavors.create_flavor(
            name=data_utils.rand_name('drs-pinned'), ram=like['ram'], vcpus=like['vcpus'],
            disk=like['disk'])['flavor']
        self.addCleanup(self.flavors.delete_flavor, flavor['id'])
        self.flavors.set_flavor_extra_spec(flavor['id'], **{'drs:automation': 'disabled'})
        return self._boot_on(pinned, flavor['id']), rule['id']

    def _pending_suspend(self, target):
        plan = self.admin_lb.show_plan()['plan']
        if plan and plan['status'] == 'pending' and any(
                a['type'] == 'suspend' and a.get('host') == target for a in plan['actions']):
            return plan
        return None

    def _approve_suspend(self, target, placed):
        """Approve the pending plan suspending ``target``; a cycle whose plan
        changed supersedes the pending one, so a lost race (409) is retried."""
        for _attempt in range(8):
            plan = self._wait('a pending plan suspending %s' % target,
                              lambda: self._pending_suspend(target))
            # Pending: nothing moved.
            self.assertEqual(placed, {uuid: s['OS-EXT-SRV-ATTR:host']
                                      for uuid, s in self._servers(placed).items()})
            try:
                return self.admin_lb.decide_plan('approve', plan['id'])['plan']
            except lib_exc.Conflict:
                continue
        self.fail('no approval won against the next cycle')

    def _set_power(self, host):
        self.admin_lb.host_action('set_power', expected=200, host=host,
                                  driver=CONF.nova_drs.power_driver,
                                  mode=CONF.nova_drs.power_mode,
                                  options=json.loads(
                                      CONF.nova_drs.power_options.replace('{host}', host)))
        # Run after the opt-out (cleanups run last in, first out): a host the
        # daemon left asleep is woken before the next test.
        self.addCleanup(self._leave_awake, host)

    def _leave_awake(self, host):
        if self.admin_lb.show_host(host)['host']['suspend_state'] in ('suspending',
                                                                       'suspended'):
            self.admin_lb.host_action('unsuspend_host', host=host)
        self._wait('%s active again' % host, lambda: self.admin_lb.show_host(host)[
            'host']['suspend_state'] == 'active')

    def _boot_on(self, host, flavor=None):
        server = self.admin_servers.create_server(
            name=data_utils.rand_name('drs-idle'), imageRef=CONF.compute.image_ref,
            flavorRef=flavor or CONF.compute.flavor_ref, networks='none',
            host=host)['server']
        self.addCleanup(waiters.wait_for_server_termination, self.admin_servers,
                        server['id'])
        self.addCleanup(self.admin_servers.delete_server, server['id'])
        return server['id']

    def _servers(self, ids):
        return {uuid: self.admin_servers.show_server(uuid)['server'] for uuid in ids}

    def _check_moved_once(self, placed, host, since):
        """Every server of ``host`` left it by exactly one completed live
        migration, is ACTIVE elsewhere, and its allocations followed it."""
        for uuid, server in self._servers(placed).items():
            self.assertEqual('ACTIVE', server['status'])
            where = server['OS-EXT-SRV-ATTR:host']
            moves = [m for m in self.migrations.list_migrations(
                instance_uuid=uuid)['migrations']
                if m['source_compute'] == host and m['created_at'] >= since]
            if placed[uuid] == host:
                self.assertNotEqual(host, where)
                self.assertEqual(['completed'], [m['status'] for m in moves], uuid)
                self.assertEqual('live-migration', moves[0]['migration_type'])
            allocations = self.placement.list_allocations(uuid)['allocations']
            self.assertEqual(1, len(allocations), (uuid, allocations))

    @decorators.attr(type=['slow'])
    @decorators.idempotent_id('0c3e5b8e-7d0a-4a53-9f3c-5b2f8e61c4d7')
    def test_idle_cluster_is_consolidated_then_load_wakes_a_host(self):
        hosts = self._computes()
        target, denied, pinned = self._roles(hosts)
        since = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime())
        ids = [self._boot_on(host) for host in hosts for _ in range(SERVERS_PER_HOST)]
        kept, rule = self._keep_on(denied, pinned)
        for uuid in ids + [kept]:
            waiters.wait_for_server_status(self.admin_servers, uuid, 'ACTIVE')
        placed = {uuid: s['OS-EXT-SRV-ATTR:host']
                  for uuid, s in self._servers(ids + [kept]).items()}
        for host in hosts:
            self._set_power(host)
        aggregate = self._opt_in(hosts)

        self.assertEqual('approved', self._approve_suspend(target, placed)['status'])
        self._wait('%s emptied and suspended after the approval' % target,
                   lambda: self._states()[target]['suspend_state'] == 'suspended')
        self._check_moved_once(placed, target, since)
        service = self.admin_services.list_services(
            binary='nova-compute', host=target)['services'][0]
        self.assertEqual('disabled', service['status'])
        states = self._states()
        self.assertEqual(('active', 'active'), (states[denied]['suspend_state'],
                                                states[pinned]['suspend_state']))
        self.assertEqual(pinned, self._servers([kept])[kept]['OS-EXT-SRV-ATTR:host'])

        # Loaded, the denied host may have to shed servers (nova's scheduler
        # placed some of the evacuees there; a deny rule keeps its servers in
        # place): the rule goes.
        self.admin_lb.delete_rule(rule)
        self._automation(aggregate, 'automatic')
        busy = CONF.nova_drs.busy_metadata.replace('{now}', '%.1f' % time.time())
        for uuid in ids:
            self.admin_servers.update_server_metadata(uuid, json.loads(busy))

        def woken_and_used():
            if self._states()[target]['suspend_state'] != 'active':
                return []
            return [s for s in self._servers(ids).values()
                    if s['OS-EXT-SRV-ATTR:host'] == target and s['status'] == 'ACTIVE'
                    and not s['OS-EXT-STS:task_state']]

        self._wait('%s woken and given servers by the daemon' % target, woken_and_used)

        def settled():
            # The rebalance may still be moving other servers onto the woken
            # host: wait for those moves to end, never passing an ERROR.
            servers = self._servers(ids + [kept])
            for uuid, server in servers.items():
                self.assertNotEqual('ERROR', server['status'], uuid)
            return all(s['status'] == 'ACTIVE' and not s['OS-EXT-STS:task_state']
                       for s in servers.values())

        self._wait('every server ACTIVE with no move under way', settled)
        self.assertEqual(pinned, self._servers([kept])[kept]['OS-EXT-SRV-ATTR:host'])
