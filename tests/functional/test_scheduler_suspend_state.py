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

"""SuspendStateFilter on real nova: boot, live migration, evacuate, unshelve."""

import collections

from nova_drs.db import hosts
from tests.functional import base


class SuspendStateFilterTest(base.DrsFunctionalTestCase):
    # Real RPC casts: a refused live migration or evacuation then ends like in
    # production (API 202, migration "error") instead of an exception
    # re-raised into the API call.
    CAST_AS_CALL = False

    def _set_state(self, host, state):
        hosts.ensure(self.drs_db, host)
        path = {hosts.SUSPENDING: [hosts.SUSPENDING],
                hosts.SUSPENDED: [hosts.SUSPENDING, hosts.SUSPENDED],
                hosts.WAKING: [hosts.SUSPENDING, hosts.SUSPENDED, hosts.WAKING],
                hosts.ERROR: [hosts.SUSPENDING, hosts.ERROR]}[state]
        current = hosts.get(self.drs_db, host)['suspend_state']
        for step in path:
            self.assertIsNotNone(hosts.transition(self.drs_db, host, current, step, 'test'))
            current = step

    def _activate(self, host):
        current = hosts.get(self.drs_db, host)['suspend_state']
        if current == hosts.SUSPENDED:
            hosts.transition(self.drs_db, host, current, hosts.WAKING, 'test')
            current = hosts.WAKING
        self.assertIsNotNone(
            hosts.transition(self.drs_db, host, current, hosts.ACTIVE, 'test'))

    def test_boot_never_lands_on_non_active_hosts(self):
        self._set_state('host1', hosts.SUSPENDING)
        self._set_state('host2', hosts.SUSPENDED)
        landed = collections.Counter(
            self.server_host(self._create_server(networks='none')['id']) for _ in range(4))
        self.assertEqual({'host3': 4}, dict(landed))

        # waking and error hosts are no better: nothing left, NoValidHost
        self._set_state('host3', hosts.ERROR)
        self._activate('host2')
        self._set_state('host2', hosts.WAKING)
        server = self._create_server(networks='none', expected_state='ERROR')
        self.assertIn('No valid host', server['fault']['message'])

        # the filter is not just rejecting everything: an active host is used again
        self._activate('host1')
        self.assertEqual('host1',
                         self.server_host(self._create_server(networks='none')['id']))

    def test_requested_host_at_boot_is_refused(self):
        self._set_state('host2', hosts.SUSPENDED)
        server = self._create_server(networks='none', host='host2', expected_state='ERROR')
        self.assertIn('No valid host', server['fault']['message'])

    def _boot_on(self, host):
        server = self._create_server(networks='none', host=host)
        self.assertEqual(host, self.server_host(server['id']))
        return server

    def _live_migrate_to(self, server, host, target=None):
        self.api.post_server_action(
            server['id'], {'os-migrateLive': {'host': target, 'block_migration': 'auto'}})
        # the fake driver takes 5 s to "copy memory"
        self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': host, 'status': 'ACTIVE'}, max_retries=30)

    def test_live_migration_without_target_skips_non_active_hosts(self):
        server = self._boot_on('host1')
        self._set_state('host2', hosts.SUSPENDED)
        self._set_state('host3', hosts.SUSPENDING)
        self._live_migrate(server, migration_expected_state='error')
        self.assertEqual('host1', self.server_host(server['id']))

        self._activate('host3')
        self._live_migrate_to(server, 'host3')

    def test_live_migration_to_non_active_target_is_refused(self):
        server = self._boot_on('host1')
        self._set_state('host2', hosts.SUSPENDING)
        self._live_migrate(server, host='host2', migration_expected_state='error')
        self.assertEqual('host1', self.server_host(server['id']))

        self._activate('host2')
        self._live_migrate_to(server, 'host2', target='host2')

    def _host_down(self, host):
        self.computes[host].stop()
        service = self.admin_api.get_services(host=host, binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)

    def test_evacuate_skips_non_active_hosts(self):
        server = self._boot_on('host1')
        self._set_state('host2', hosts.SUSPENDED)
        self._set_state('host3', hosts.ERROR)
        self._host_down('host1')
        self._evacuate_server(server, expected_state='ERROR', expected_migration_status='error')
        self.assertEqual('host1', self.server_host(server['id']))

    def test_evacuate_lands_on_the_active_host(self):
        server = self._boot_on('host1')
        self._set_state('host2', hosts.SUSPENDED)
        self._host_down('host1')
        self._evacuate_server(server, expected_host='host3')

    def test_unshelve_skips_non_active_hosts(self):
        server = self._boot_on('host1')
        self._shelve_server(server)
        self._set_state('host1', hosts.SUSPENDING)
        self._set_state('host2', hosts.SUSPENDED)
        self._unshelve_server(server)
        self.assertEqual('host3', self.server_host(server['id']))

        self._shelve_server(server)
        self._set_state('host3', hosts.SUSPENDING)
        self.api.post_server_action(server['id'], {'unshelve': None})
        self._wait_for_instance_action_event(server, 'unshelve',
                                             'schedule_instances', 'Error')
        self.assertIsNone(self.server_host(server['id']))
