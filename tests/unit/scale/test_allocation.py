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

"""CloudStack's scale allocation logic: in place, move within the cluster, refuse."""

import unittest

from nova_drs.overcommit import accounting
from nova_drs.scale import allocation
from nova_drs.scale import executor

SMALL = allocation.Flavor(2, 512, 'small')
BIG = allocation.Flavor(6, 1024, 'big')


def host(name, vcpus_used, ram_used, vcpus=10, ram=8192, cpu_ratio=1.0, ram_ratio=1.0):
    return allocation.host_capacity(name, (vcpus, vcpus_used, 4.0), (ram, ram_used, 1.5),
                                    cpu_ratio, ram_ratio, {})


class TestDecide(unittest.TestCase):

    def test_in_place_when_current_host_fits_the_whole_new_flavor(self):
        decision = allocation.decide('h1', 'c1', [host('h1', 4, 0), host('h2', 0, 0)], BIG)
        self.assertEqual(allocation.Decision(allocation.IN_PLACE, ('h1',)), decision)

    def test_delta_alone_is_not_enough_in_place(self):
        # 5 used: the delta (4) fits but nova holds old + new until confirmed.
        decision = allocation.decide('h1', 'c1', [host('h1', 5, 0), host('h2', 0, 0)], BIG)
        self.assertEqual(allocation.MOVE, decision.kind)
        self.assertEqual(('h2',), decision.hosts)

    def test_move_candidates_exclude_full_hosts_and_order_by_free_ram(self):
        hosts = [host('h1', 8, 0), host('h2', 0, 4096), host('h3', 0, 1024),
                 host('h4', 5, 0)]
        decision = allocation.decide('h1', 'c1', hosts, BIG)
        self.assertEqual(('h3', 'h2'), decision.hosts)

    def test_refused_with_cluster_name_when_nothing_fits(self):
        decision = allocation.decide('h1', 'c1', [host('h1', 8, 0), host('h2', 0, 7500)],
                                     BIG)
        self.assertEqual(allocation.REFUSE, decision.kind)
        self.assertEqual((), decision.hosts)
        self.assertIn('no capacity in cluster c1', decision.reason)

    def test_aggregate_ratio_counts_overcommit(self):
        # 10 vCPUs at ratio 2.0 = 20; 12 used leaves 8 for the 6-vCPU flavor.
        decision = allocation.decide('h1', 'c1', [host('h1', 12, 0, cpu_ratio=2.0)], BIG)
        self.assertEqual(allocation.IN_PLACE, decision.kind)

    def test_placement_ratio_applies_without_aggregate_ratio(self):
        capacity = allocation.host_capacity('h1', (10, 12, 4.0), (100, 0, 1.0), None, None,
                                            {})
        self.assertEqual(40, capacity.cpu.total)

    def test_recorded_deployed_with_ratio_raises_usage(self):
        # 4 vCPUs deployed at ratio 1.0 count 4 * 2.0 / 1.0 = 8 at ratio 2.0.
        recorded = {'vcpus': {1.0: 4}, 'memory_mb': {}}
        capacity = allocation.host_capacity('h1', (10, 4, 4.0), (8192, 0, 1.0), 2.0, 1.0,
                                            recorded)
        self.assertEqual(accounting.Capacity(10, 2.0, 20, 8), capacity.cpu)

    def test_server_host_outside_the_cluster_list_is_never_in_place(self):
        decision = allocation.decide('elsewhere', 'c1', [host('h2', 0, 0)], BIG)
        self.assertEqual((allocation.MOVE, ('h2',)), (decision.kind, decision.hosts))


class TestRequestProblem(unittest.TestCase):

    def test_scale_up_is_allowed(self):
        self.assertIsNone(allocation.request_problem(SMALL, BIG, False))

    def test_scale_down_needs_the_option(self):
        self.assertIn('allow_scale_down', allocation.request_problem(BIG, SMALL, False))
        self.assertIsNone(allocation.request_problem(BIG, SMALL, True))

    def test_less_ram_with_more_vcpus_is_a_scale_down(self):
        odd = allocation.Flavor(8, 256, 'odd')
        self.assertIn('allow_scale_down', allocation.request_problem(SMALL, odd, False))

    def test_same_size_is_refused(self):
        twin = allocation.Flavor(2, 512, 'twin')
        self.assertIn('same vCPUs and RAM', allocation.request_problem(SMALL, twin, True))


class TestScaleCluster(unittest.TestCase):

    def test_enabled_aggregate_of_the_host(self):
        aggregates = [{'id': 3, 'hosts': ['h1'], 'metadata': {'drs_scale_enabled': 'True'}},
                      {'id': 1, 'hosts': ['h1'], 'metadata': {}},
                      {'id': 2, 'hosts': ['h2'], 'metadata': {'drs_scale_enabled': 'true'}}]
        self.assertEqual(3, executor.scale_cluster(aggregates, 'h1')['id'])

    def test_none_when_disabled_or_invalid(self):
        aggregates = [{'id': 1, 'hosts': ['h1'], 'metadata': {'drs_scale_enabled': 'nope'}},
                      {'id': 2, 'hosts': None, 'metadata': None}]
        self.assertIsNone(executor.scale_cluster(aggregates, 'h1'))
