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

"""DRS weighers on nova HostState objects: policy choice, measured load, threshold."""

import os
import tempfile
import unittest

from nova import objects
from nova.scheduler import host_manager
from nova.scheduler import weights as nova_weights
from oslo_config import fixture as config_fixture

from nova_drs import aggregate_keys
from nova_drs import conf as drs_conf
from nova_drs import weights as drs_weights
from nova_drs.db import api as db_api
from nova_drs.db import migration
from nova_drs.db import overcommit as db_overcommit
from nova_drs.scheduling import request_view
from nova_drs.weights import base
from nova_drs.weights import even_distribution
from nova_drs.weights import power_saving

objects.register_all()


def aggregate(id, **metadata):
    return objects.Aggregate(id=id, name='agg%d' % id, metadata=metadata, hosts=[])


def host_state(name, vcpus_used=0, ram_used=512, aggregates=(), stats=None):
    state = host_manager.HostState(name, name, 'cell1')
    state.vcpus_total = 10
    state.vcpus_used = vcpus_used
    state.total_usable_ram_mb = 8192
    state.free_ram_mb = 8192 - ram_used
    state.cpu_allocation_ratio = 1.0
    state.ram_allocation_ratio = 1.0
    state.aggregates = list(aggregates)
    state.stats = stats or {}
    return state


class WeigherTestCase(unittest.TestCase):

    def setUp(self):
        self.conf = self.useFixture(config_fixture.Config(drs_conf.CONF))
        path = os.path.join(tempfile.mkdtemp(), 'drs.sqlite')
        self.conf.config(connection='sqlite:///' + path, group='drs_database')
        self.conf.config(cache_seconds=0, group='drs_scheduler')
        migration.sync(db_api.Database('sqlite:///' + path))
        self.spec = objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=64))

    def useFixture(self, fixture):
        fixture.setUp()
        self.addCleanup(fixture.cleanUp)
        return fixture


class PolicyTest(WeigherTestCase):

    def test_policy_from_aggregate_default_and_conflicts(self):
        self.assertEqual('none', base.host_policy(host_state('h')))
        self.conf.config(default_policy='power_saving', group='loadbalancer')
        self.assertEqual('power_saving', base.host_policy(host_state('h')))
        self.assertEqual('even_distribution', base.host_policy(host_state(
            'h', aggregates=[aggregate(1, drs_policy='Even_Distribution')])))
        with self.assertLogs(aggregate_keys.LOG.logger, 'WARNING'):
            self.assertEqual('power_saving', base.host_policy(host_state(
                'h', aggregates=[aggregate(2, drs_policy='even_distribution'),
                                 aggregate(3, drs_policy='none')])))
        with self.assertLogs(aggregate_keys.LOG.logger, 'WARNING'):
            self.assertEqual('power_saving', base.host_policy(host_state(
                'h', aggregates=[aggregate(4, drs_policy='greedy')])))

    def test_recorded_usage_counts_in_allocation(self):
        database = db_api.shared_database(drs_conf.CONF)
        db_overcommit.record(database, 'uuid-1', 'h', 2, 64, 1.0, 1.0, 'test')
        state = host_state('h', vcpus_used=2,
                           aggregates=[aggregate(5, cpu_allocation_ratio='2.0')])
        view = request_view.request_view(self.spec)
        cpu = view.cpu(state)
        # 2 vCPUs deployed at 1.0 count 4 at 2.0: 4 of 20
        self.assertEqual((20.0, 4.0), (cpu.total, cpu.used))
        self.assertEqual(20.0, base.allocated_percent(view, state))


class EvenDistributionTest(WeigherTestCase):

    AGG = aggregate(10, drs_policy='even_distribution')

    def test_measured_load_wins_over_allocation(self):
        busy = host_state('busy', vcpus_used=0, aggregates=[self.AGG], stats={
            'drs_cpu_used_percent': '90.0', 'drs_memory_used_mb': '1000',
            'drs_memory_total_mb': '8000'})
        allocated = host_state('allocated', vcpus_used=5, aggregates=[self.AGG])
        weigher = even_distribution.EvenDistributionWeigher()
        self.assertAlmostEqual(10.0, weigher._weigh_object(busy, self.spec))
        self.assertAlmostEqual(50.0, weigher._weigh_object(allocated, self.spec))

    def test_memory_can_be_the_higher_load(self):
        state = host_state('h', aggregates=[self.AGG], stats={
            'drs_cpu_used_percent': '10', 'drs_memory_used_mb': '6000',
            'drs_memory_total_mb': '8000'})
        weight = even_distribution.EvenDistributionWeigher()._weigh_object(state, self.spec)
        self.assertAlmostEqual(25.0, weight)

    def test_broken_stats_fall_back_to_allocation(self):
        state = host_state('h', vcpus_used=3, aggregates=[self.AGG], stats={
            'drs_cpu_used_percent': 'n/a', 'drs_memory_total_mb': '0'})
        weight = even_distribution.EvenDistributionWeigher()._weigh_object(state, self.spec)
        self.assertAlmostEqual(70.0, weight)

    def test_other_policies_weigh_nothing(self):
        state = host_state('h', stats={'drs_cpu_used_percent': '1'})
        self.assertEqual(0.0, even_distribution.EvenDistributionWeigher()._weigh_object(
            state, self.spec))


class PowerSavingTest(WeigherTestCase):

    AGG = aggregate(20, drs_policy='power_saving', high_utilization='50')

    def test_fullest_host_below_threshold_wins(self):
        weigher = power_saving.PowerSavingWeigher()
        weights = {used: weigher._weigh_object(
            host_state('h%d' % used, vcpus_used=used, aggregates=[self.AGG]), self.spec)
            for used in (0, 3, 4, 5)}
        # after placing 1 vCPU: 10 %, 40 %, 50 % (still at the mark), 60 % (over)
        self.assertEqual({0: 10.0, 3: 40.0, 4: 50.0, 5: 0.0}, weights)

    def test_threshold_option_applies_without_metadata(self):
        self.conf.config(high_utilization_percent=30, group='drs_scheduler')
        state = host_state('h', vcpus_used=3,
                           aggregates=[aggregate(21, drs_policy='power_saving')])
        self.assertEqual(0.0, power_saving.PowerSavingWeigher()._weigh_object(state, self.spec))


class WeigherListsTest(unittest.TestCase):

    def test_drs_weighers_are_ours_only_and_the_old_list_warns(self):
        ours = [power_saving.PowerSavingWeigher, even_distribution.EvenDistributionWeigher,
                drs_weights.MigrationWeigher]
        self.assertEqual(ours, drs_weights.drs_weighers())
        with self.assertLogs(drs_weights.LOG.logger, 'WARNING') as logs:
            self.assertEqual(nova_weights.all_weighers() + ours, drs_weights.all_weighers())
        self.assertIn('nova.scheduler.weights.all_weighers,nova_drs.weights.drs_weighers',
                      logs.output[0])
