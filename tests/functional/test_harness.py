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

"""The harness itself: a real nova cloud with nova-drs switched on by config."""

import collections

from nova_drs import conf as drs_conf
from nova_drs.db import migration
from tests.functional import base


class TestHarnessBootsRealNova(base.DrsFunctionalTestCase):

    def test_three_computes_registered(self):
        services = self.admin_api.get_services(binary='nova-compute')
        self.assertEqual(sorted(self.COMPUTE_HOSTS),
                         sorted(s['host'] for s in services))
        self.assertTrue(all(s['state'] == 'up' for s in services))
        providers = self.placement.get('/resource_providers').body
        self.assertEqual(len(self.COMPUTE_HOSTS), len(providers['resource_providers']))

    def test_a_created_flavor_listed_first_is_not_everyone_s_default(self):
        self.admin_api.post_flavor({'flavor': {
            'name': 'first', 'id': '0' * 8, 'vcpus': 2, 'ram': 1024, 'disk': 1}})
        self.assertEqual('0' * 8, self.api.get_flavors()[0]['id'])
        server = self._create_server(networks='none')
        self.assertEqual('m1.tiny', server['flavor']['original_name'])

    def test_servers_boot_and_spread(self):
        hosts = collections.Counter()
        for index in range(3):
            server = self._create_server(name='vm%d' % index, networks='none')
            self.assertEqual('ACTIVE', server['status'])
            hosts[self.server_host(server['id'])] += 1
        self.assertEqual(3, sum(hosts.values()))
        self.assertTrue(set(hosts) <= set(self.COMPUTE_HOSTS))

    def test_operator_config_is_applied_and_drs_db_synced(self):
        conf = drs_conf.CONF
        self.assertEqual(self.state_dir, conf.drs.state_path)
        self.assertEqual(migration.head_revision(),
                         migration.current_revision(self.drs_db))
        self.assertIn(self.state_dir, self.drs_db.connection)
