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

"""drs_policy = even_distribution on real nova: servers leave the hot host, nothing sleeps."""

from nova_drs.db import hosts as drs_hosts
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle


class TestEvenDistribution(test_daemon_cycle.DaemonTestBase):
    CLUSTER_METADATA = {'drs_policy': 'even_distribution'}
    # The whole plan runs in one cycle: once below high_utilization a host
    # is no longer hot, so a plan cut short by the limit stays cut short.
    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('loadbalancer', 'max_migrations_per_host'): '3'}

    def test_hot_host_sheds_to_least_loaded_hosts_nothing_suspended(self):
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'two', 'vcpus': 2, 'ram': 512, 'disk': 1}})
        servers = [self._create_server(name='s%d' % i, host='host1', networks='none',
                                       flavor_id=flavor['id']) for i in range(5)]
        every_action = []
        for _ in range(4):
            # 5 x 2 busy vCPUs on 10: host1 at 100 % for 12 minutes; the others idle.
            daemon_support.record_load(
                self.drs_db, {'host1': 100.0, 'host2': 1.0, 'host3': 1.0},
                {s['id']: (self.server_host(s['id']), 100.0) for s in servers})
            every_action += self.cycle()['actions']
            if len(self.nova.servers_on_host('host1')) <= 2:
                break
        where = [self.server_host(s['id']) for s in servers]
        # Mean load 33 %, tolerance 10 %: host1 keeps 2 (40 %), the least
        # loaded hosts take the others, one or two each.
        self.assertEqual(2, where.count('host1'), every_action)
        self.assertEqual({'host2', 'host3'}, set(where) - {'host1'})
        self.assertEqual({'migrate'}, {a.kind for a in every_action})
        self.assertEqual({'host1'}, {a.source for a in every_action})
        self.assertEqual([], self.power.calls)
        self.assertEqual({'host1': 'active', 'host2': 'active', 'host3': 'active'},
                         drs_hosts.states(self.drs_db))
        for server in servers:
            self.assertEqual('ACTIVE', self.admin_api.get_server(server['id'])['status'])
        # Balanced now: further cycles move nothing.
        daemon_support.record_load(
            self.drs_db, {h: 40.0 for h in self.COMPUTE_HOSTS},
            {s['id']: (self.server_host(s['id']), 100.0) for s in servers})
        self.assertEqual([], self.cycle()['actions'])
