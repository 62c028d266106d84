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

"""instance_stats plugin over a driver returning nova Diagnostics objects."""

import unittest

from nova import exception as nova_exception
from nova import objects
from nova.objects import diagnostics
from oslo_utils import timeutils

from nova_drs.resources import base
from nova_drs.resources.plugins import instance_stats


class CountersDriver:
    """Returns the cumulative counters a test sets, like libvirt does."""

    def __init__(self):
        self.cpu_ns = {}
        self.requests = {}
        self.memory = {}

    def get_instance_diagnostics(self, instance):
        uuid = instance.uuid
        if uuid not in self.cpu_ns:  # as libvirt's driver, for a domain it lacks
            raise nova_exception.InstanceNotFound(instance_id=uuid)
        diags = diagnostics.Diagnostics(state='running', driver='libvirt')
        diags.add_cpu(id=0, time=self.cpu_ns[uuid])
        diags.add_disk(read_requests=self.requests.get(uuid, 0), write_requests=0)
        if uuid in self.memory:
            diags.memory_details = diagnostics.MemoryDiagnostics(
                maximum=1024, used=self.memory[uuid])
        return diags


class TestInstanceStats(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        objects.register_all()

    def setUp(self):
        self.now = 100.0
        self.driver = CountersDriver()
        self.plugin = instance_stats.InstanceStats(clock=lambda: self.now)

    def period(self, *usages):
        self.plugin.reset(None, self.driver)
        for usage in usages:
            self.plugin.add_instance(usage)
        return {s['instance_uuid']: s for s in self.plugin.report()['instances']}

    def usage(self, uuid, vcpus=2, launched=True):
        instance = objects.Instance(uuid=uuid,
                                    launched_at=timeutils.utcnow() if launched else None)
        return base.InstanceUsage(uuid=uuid, vcpus=vcpus, memory_mb=512, extra_specs={},
                                  instance=instance)

    def test_cpu_percent_iops_and_memory(self):
        self.driver.cpu_ns['a'] = 0
        self.driver.requests['a'] = 100
        first = self.period(self.usage('a'))['a']
        self.assertIsNone(first['cpu_used_percent'])
        self.assertEqual(512, first['mem'])  # driver did not say: flavor memory
        self.now += 10
        self.driver.cpu_ns['a'] = 5 * 10 ** 9
        self.driver.requests['a'] = 400
        self.driver.memory['a'] = 300
        second = self.period(self.usage('a'))['a']
        self.assertAlmostEqual(25.0, second['cpu_used_percent'])  # 5 s of 2 vCPUs x 10 s
        self.assertAlmostEqual(30.0, second['iops'])
        self.assertEqual(300, second['mem'])
        self.assertEqual(0, second['prev_cpu_time'])

    def test_resize_and_removal(self):
        self.driver.cpu_ns['a'] = 0
        self.period(self.usage('a', vcpus=1))
        self.now += 10
        self.driver.cpu_ns['a'] = 20 * 10 ** 9
        resized = self.period(self.usage('a', vcpus=4))['a']
        self.assertAlmostEqual(50.0, resized['cpu_used_percent'])
        self.plugin.remove_instance(self.usage('a'))
        self.now += 10
        again = self.period(self.usage('a', vcpus=4))['a']
        self.assertIsNone(again['cpu_used_percent'])  # forgotten: new baseline

    def test_an_instance_not_launched_yet_is_not_sampled(self):
        # libvirt's get_instance_diagnostics needs launched_at (its uptime).
        self.driver.cpu_ns['a'] = 0
        self.assertEqual({}, self.period(self.usage('a', launched=False)))
        self.assertIn('a', self.period(self.usage('a')))

    def test_an_instance_gone_from_the_host_is_skipped_and_forgotten(self):
        self.driver.cpu_ns['a'] = 0
        self.driver.cpu_ns['b'] = 0
        self.period(self.usage('a'), self.usage('b'))
        del self.driver.cpu_ns['a']  # its live migration completed mid-period
        self.now += 10
        self.driver.cpu_ns['b'] = 10 ** 9
        samples = self.period(self.usage('a'), self.usage('b'))
        self.assertEqual(['b'], list(samples))
        self.assertAlmostEqual(5.0, samples['b']['cpu_used_percent'])
        # Back later (migrated back): a new baseline, not a rate over the gap.
        self.driver.cpu_ns['a'] = 50 * 10 ** 9
        self.now += 10
        self.assertIsNone(self.period(self.usage('a'))['a']['cpu_used_percent'])
