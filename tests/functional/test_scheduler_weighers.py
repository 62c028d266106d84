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

"""DRS weighers on real nova: which host each server lands on.

Computes use nova's MediumFakeDriver (10 vCPUs, 8 GB each). Policies and
multipliers come from aggregate metadata, as operators set them.
"""

from tests.functional import base


class WeigherTestBase(base.DrsFunctionalTestCase):
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'

    def setUp(self):
        super().setUp()
        self.flavor_id = self.admin_api.post_flavor({'flavor': {
            'name': 'one-vcpu', 'ram': 64, 'vcpus': 1, 'disk': 1}})['id']

    def aggregate(self, name, hosts, **metadata):
        agg_id = self.admin_api.post_aggregate({'aggregate': {'name': name}})['id']
        for host in hosts:
            self.admin_api.add_host_to_aggregate(agg_id, host)
        self.admin_api.post_aggregate_action(
            agg_id, {'set_metadata': {'metadata': metadata}})

    def boot(self, host=None):
        server = self._create_server(flavor_id=self.flavor_id, networks='none', host=host)
        return server, self.server_host(server['id'])

    def landing_order(self, count):
        return [self.boot()[1] for _ in range(count)]


class PowerSavingWeigherTest(WeigherTestBase):

    def test_packs_below_the_high_utilization_mark(self):
        self.aggregate('P', self.COMPUTE_HOSTS, drs_policy='power_saving',
                       cpu_allocation_ratio='1.0', high_utilization='50',
                       drs_power_saving_weight_multiplier='100')
        order = self.landing_order(10)
        # 5 x 1 vCPU = 50 % of a 10-vCPU host; the 6th would pass the mark
        first, second = order[0], order[5]
        self.assertNotEqual(first, second)
        self.assertEqual([first] * 5 + [second] * 5, order)

    def test_without_the_policy_nova_spreads(self):
        self.aggregate('P', self.COMPUTE_HOSTS, cpu_allocation_ratio='1.0',
                       high_utilization='50',
                       drs_power_saving_weight_multiplier='100')
        self.assertEqual(3, len(set(self.landing_order(3))))


class EvenDistributionWeigherTest(WeigherTestBase):
    # nova's own weighers pack here, so spreading can only come from ours
    EXTRA_FLAGS = {('filter_scheduler', 'ram_weight_multiplier'): -1.0,
                   ('filter_scheduler', 'cpu_weight_multiplier'): -1.0,
                   ('filter_scheduler', 'disk_weight_multiplier'): -1.0,
                   ('filter_scheduler', 'io_ops_weight_multiplier'): 0.0,
                   # Every in-process "host" measures the same machine, so the
                   # measured path cannot tell them apart (unit-tested instead);
                   # without the monitor the weigher spreads on allocation.
                   ('DEFAULT', 'compute_monitors'): ''}

    def test_spreads_on_load_when_the_policy_says_so(self):
        self.aggregate('E', self.COMPUTE_HOSTS, drs_policy='even_distribution',
                       drs_even_distribution_weight_multiplier='100')
        order = self.landing_order(6)
        self.assertEqual(3, len(set(order[:3])), order)
        self.assertEqual({2}, {order.count(host) for host in self.COMPUTE_HOSTS}, order)

    def test_without_the_policy_nova_packs(self):
        self.aggregate('E', self.COMPUTE_HOSTS, drs_even_distribution_weight_multiplier='100')
        self.assertEqual(1, len(set(self.landing_order(3))))


class MigrationWeigherTest(WeigherTestBase):
    # cache_seconds 0: the confirmation below must be seen by the very next boot
    EXTRA_FLAGS = {('drs_scheduler', 'migration_weight_multiplier'): 100.0,
                   ('drs_scheduler', 'cache_seconds'): 0}

    def test_avoids_hosts_with_a_migration_in_progress(self):
        moving, _ = self.boot(host='host1')
        self.boot(host='host3')
        self.boot(host='host3')
        # cold migration host1 -> host2 waiting for confirmation: both busy
        self._migrate_server(moving, host='host2')
        self.assertEqual('host3', self.boot()[1])

        # once confirmed, nova's spreading picks a less loaded host than host3 again
        self._confirm_resize(moving)
        self.assertIn(self.boot()[1], ('host1', 'host2'))


class ServerGroupPoliciesTest(WeigherTestBase):
    """The documented weight_classes keeps every nova server-group policy.

    nova refuses soft-affinity and soft-anti-affinity unless weight_classes
    names ``nova.scheduler.weights.all_weighers`` literally; the old
    documented ``nova_drs.weights.all_weighers`` alone sent those boots to
    ERROR.
    """

    def boot_in_group(self, policy):
        group = self.api.post_server_groups({'name': policy, 'policy': policy})
        body = self._build_server(flavor_id=self.flavor_id, networks='none')
        server = self.api.post_server({'server': body,
                                       'os:scheduler_hints': {'group': group['id']}})
        return self._wait_for_state_change(server, 'ACTIVE')

    def test_every_policy_boots_under_the_documented_config(self):
        for policy in ('affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'):
            with self.subTest(policy=policy):
                self.assertEqual('ACTIVE', self.boot_in_group(policy)['status'])
