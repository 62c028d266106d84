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

"""Overcommit ratios follow aggregate membership, on real nova and placement.

A host the sync gave an aggregate's ratio gets its default (nova's
``initial_cpu_allocation_ratio``, 4.0 here) back in placement when it
leaves the aggregate, the aggregate is deleted or its key is unset; the
capacity report shows the same ratio. A ratio change that leaves a host over
100 % is alerted by the sync itself, the daemon's included.
"""

from nova_drs import conf as drs_conf
from nova_drs.cmd import manage_overcommit
from nova_drs.daemon import service
from nova_drs.db import overcommit as db_overcommit
from nova_drs.loadbalancer import catalog
from nova_drs.overcommit import alerts
from tests.functional import daemon_support
from tests.functional.test_scheduler_overcommit import OvercommitTestBase

DEFAULT_RATIO = 4.0     # nova's initial_cpu_allocation_ratio


class RatioFollowsMembershipTest(OvercommitTestBase):
    COMPUTE_HOSTS = ('host1', 'host2')

    def setUp(self):
        super().setUp()
        # A ratio-less aggregate keeps host1 in the capacity report throughout.
        self.aggregate('rack', ['host1'])

    def assert_back_to_default(self):
        dry = self.sync(dry_run=True)
        self.assertEqual({('host1', 'VCPU', DEFAULT_RATIO)},
                         {(c.host, c.resource_class, c.new) for c in dry.changes})
        self.assertNotEqual(DEFAULT_RATIO, self.placement_ratio('host1'))
        self.sync()
        self.assertEqual(DEFAULT_RATIO, self.placement_ratio('host1'))
        capacity, _text = self.report()
        self.assertEqual(DEFAULT_RATIO, capacity[('host1', 'vcpus')].ratio)
        self.assertEqual([], self.sync().changes)
        self.assertNotIn(('host1', 'VCPU'), db_overcommit.synced_ratios(self.drs_db))
        # Placement now admits what the report promises: 2 vCPUs * 4.0.
        self.assertEqual(8, self.boot_until_full().get('host1'))

    def test_leaving_the_aggregate_restores_the_default(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.sync()
        self.assertEqual(1.0, self.placement_ratio('host1'))
        self.admin_api.remove_host_from_aggregate(agg_id, 'host1')
        self.assert_back_to_default()

    def test_deleting_the_aggregate_restores_the_default(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='2.0')
        self.sync()
        self.assertEqual(2.0, self.placement_ratio('host1'))
        self.admin_api.remove_host_from_aggregate(agg_id, 'host1')
        self.admin_api.delete_aggregate(agg_id)
        self.assert_back_to_default()

    def test_unsetting_the_key_restores_the_default(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.sync()
        self.set_metadata(agg_id, cpu_allocation_ratio=None)
        self.assert_back_to_default()

    def test_a_host_the_sync_never_wrote_is_left_alone(self):
        self.aggregate('A', ['host2'], cpu_allocation_ratio='1.0')
        self.assertEqual({'host2'}, {c.host for c in self.sync().changes})


class SyncAlertsOverHundredTest(OvercommitTestBase):
    COMPUTE_HOSTS = ('host1',)

    def fill_at_two_then_lower(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='2.0')
        self.sync()
        self.assertEqual({'host1': 4}, self.boot_until_full())
        self.notifier.reset()
        self.set_metadata(agg_id, cpu_allocation_ratio='1.0')

    def exceeded(self):
        return [(n.publisher_id, n.payload['host'], n.payload['resource'],
                 n.payload['percent']) for n in self.notifier.notifications
                if n.event_type == alerts.EVENT_TYPE]

    def test_manage_sync_alerts_when_it_lowers_a_full_host(self):
        self.fill_at_two_then_lower()
        _result, text = manage_overcommit.run_sync(
            drs_conf.CONF, self.placement_adapter, self.drs_db, self.ctxt)
        self.assertEqual(1.0, self.placement_ratio('host1'))
        self.assertEqual([('nova-drs.manage', 'host1', 'vcpus', 200.0)], self.exceeded())
        self.assertIn('uses 200.0% of its vcpus capacity', self.stdlog.logger.output)
        self.assertIn('WARNING: host host1 vcpus is at ratio 1: 200.0% of capacity', text)

    def test_daemon_sync_alerts_when_it_lowers_a_full_host(self):
        self.fill_at_two_then_lower()
        balancer = service.LoadBalancer(
            drs_conf.CONF, daemon_support.nova_api_for(self), self.drs_db,
            catalog.by_name('drs'), daemon_support.InProcessHostPower(self))
        balancer.run_cycle()
        self.assertEqual(1.0, self.placement_ratio('host1'))
        self.assertEqual([('nova-drs.loadbalancer', 'host1', 'vcpus', 200.0)],
                         self.exceeded())
