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

"""Loader, guards, compute units and the consumer filter bookkeeping."""

import logging
import types
import unittest

from nova_drs import exception
from nova_drs.resources import base
from nova_drs.resources import guard
from nova_drs.resources import loader
from nova_drs.resources import monitor
from nova_drs.resources import units
from nova_drs.resources.consumers import compute_units as cu_consumer
from nova_drs.resources.plugins import compute_units as cu_plugin


class Broken(base.ComputeResourcePlugin):
    def reset(self, resources, driver):
        raise RuntimeError('broken')


class TestLoader(unittest.TestCase):

    def test_entry_points_and_paths(self):
        plugins = loader.load(loader.COMPUTE_NAMESPACE,
                              ['compute_units', '%s:Broken' % __name__],
                              base.ComputeResourcePlugin)
        self.assertEqual(['compute_units', '%s:Broken' % __name__],
                         [plugin.name for plugin in plugins])

    def test_unknown_name_is_a_clear_error(self):
        with self.assertRaisesRegex(exception.PluginLoadError, "unknown plugin 'nope'.*known"):
            loader.load(loader.COMPUTE_NAMESPACE, ['nope'], base.ComputeResourcePlugin)

    def test_wrong_base_class(self):
        with self.assertRaisesRegex(exception.PluginLoadError, 'is not a SchedulerConsumer'):
            loader.load(loader.CONSUMER_NAMESPACE, ['%s:Broken' % __name__],
                        base.SchedulerConsumerPlugin)

    def test_empty_list_loads_nothing(self):
        self.assertEqual([], loader.load(loader.CONSUMER_NAMESPACE, [' '],
                                         base.SchedulerConsumerPlugin))


class TestGuards(unittest.TestCase):

    def test_period_guard_logs_one_line_per_plugin(self):
        plugin = Broken()
        plugin.name = 'broken'
        periodic = guard.PeriodGuard('compute resource')
        with self.assertLogs(guard.LOG.logger, logging.ERROR) as logs:
            for _ in range(5):
                self.assertEqual('x', periodic.call(plugin, 'reset', None, None,
                                                    default='x'))
            periodic.flush()
        self.assertEqual(1, len(logs.records))
        self.assertIn('broken failed 5 time(s)', logs.output[0])

    def test_rate_limited_guard(self):
        now = [0.0]
        plugin = Broken()
        plugin.name = 'broken'
        limited = guard.RateLimitedGuard('scheduler consumer', 60, clock=lambda: now[0])
        with self.assertLogs(guard.LOG.logger, logging.ERROR) as logs:
            for second in (0, 10, 59, 61):
                now[0] = second
                limited.call(plugin, 'reset', None, None)
        self.assertEqual(2, len(logs.records))
        self.assertIn('2 more failure(s)', logs.output[1])


class FakeConf:
    def __init__(self, compute_units=0, per_cpu=10):
        self.drs_resources = types.SimpleNamespace(
            compute_units=compute_units, compute_units_per_cpu=per_cpu)


def usage(uuid, cu):
    return base.InstanceUsage(uuid=uuid, vcpus=1, memory_mb=512,
                              extra_specs={units.CU_EXTRA_SPEC: str(cu)})


class TestComputeUnits(unittest.TestCase):

    def test_requested_cu(self):
        self.assertEqual(0, units.requested_cu({}))
        self.assertEqual(6, units.requested_cu({'drs:cu': ' 6 '}))
        with self.assertRaisesRegex(ValueError, 'drs:cu'):
            units.requested_cu({'drs:cu': 'lots'})
        with self.assertRaisesRegex(ValueError, 'negative'):
            units.requested_cu({'drs:cu': '-1'})

    def test_capacity_from_vcpus_and_usage(self):
        plugin = cu_plugin.ComputeUnits(conf=FakeConf())
        plugin.reset(base.HostResources('h', 'h', vcpus=2, memory_mb=0), None)
        self.assertIsNone(plugin.test(usage('a', 15), {}))
        plugin.add_instance(usage('a', 15))
        self.assertIn('needs 6 cu, 5 of 20 cu free', plugin.test(usage('b', 6), {}))
        stats = {}
        plugin.write(stats)
        self.assertEqual({'drs_cu_total': '20', 'drs_cu_used': '15',
                          'drs_cu_instances': 'a'}, stats)

    def test_configured_capacity_and_reset(self):
        plugin = cu_plugin.ComputeUnits(conf=FakeConf(compute_units=7))
        plugin.reset(base.HostResources('h', 'h', vcpus=2, memory_mb=0), None)
        plugin.add_instance(usage('a', 3))
        plugin.reset(base.HostResources('h', 'h', vcpus=2, memory_mb=0), None)
        stats = {}
        plugin.write(stats)
        self.assertEqual({'drs_cu_total': '7', 'drs_cu_used': '0',
                          'drs_cu_instances': ''}, stats)


def spec(cu):
    extra = {units.CU_EXTRA_SPEC: str(cu)} if cu is not None else {}
    return types.SimpleNamespace(flavor=types.SimpleNamespace(extra_specs=extra),
                                 memory_mb=512)


class TestComputeUnitsConsumer(unittest.TestCase):

    def host(self, stats, instances=None, lookup=None):
        host_state = types.SimpleNamespace(host='h', drs={}, instances=instances or {})
        consumer = cu_consumer.ComputeUnitsConsumer(lookup=lookup)
        consumer.name = 'compute_units'
        consumer.update_from_compute_node(host_state, stats)
        return consumer, host_state

    def test_free_cu_and_consumption(self):
        consumer, host_state = self.host({'drs_cu_total': '10', 'drs_cu_used': '4'})
        self.assertTrue(consumer.host_passes(host_state, spec(6)))
        consumer.consume_from_request(host_state, spec(6))
        self.assertFalse(consumer.host_passes(host_state, spec(1)))
        self.assertTrue(consumer.host_passes(host_state, spec(None)))

    def test_instances_placed_since_the_host_counted_are_added(self):
        asked = []

        def lookup(host_state, uuids):
            asked.append(set(uuids))
            return [{'drs:cu': '3'}, {}]  # 'stale' is no longer on the host

        stats = {'drs_cu_total': '10', 'drs_cu_used': '4', 'drs_cu_instances': 'a,gone'}
        consumer, host_state = self.host(
            stats, {'a': None, 'b': None, 'c': None, 'stale': None}, lookup)
        self.assertEqual([{'b', 'c', 'stale'}], asked)
        self.assertEqual(7, host_state.drs['compute_units']['used'])
        self.assertTrue(consumer.host_passes(host_state, spec(3)))
        self.assertFalse(consumer.host_passes(host_state, spec(4)))

    def test_no_lookup_when_everything_is_counted(self):
        def lookup(host_state, uuids):
            raise AssertionError('no query expected')

        stats = {'drs_cu_total': '10', 'drs_cu_used': '4', 'drs_cu_instances': 'a'}
        _, host_state = self.host(stats, {'a': None}, lookup)
        self.assertEqual(4, host_state.drs['compute_units']['used'])

    def test_host_without_cu_report_fails_cu_flavors_only(self):
        consumer, host_state = self.host({})
        self.assertFalse(consumer.host_passes(host_state, spec(1)))
        self.assertTrue(consumer.host_passes(host_state, spec(None)))


class TestMergeReport(unittest.TestCase):

    def test_dicts_update_lists_extend(self):
        sample = {'host_stats': {'vcpus': 4}}
        monitor.merge_report(sample, {'host_stats': {'memory_used': 1}, 'instances': [1]})
        monitor.merge_report(sample, {'instances': [2], 'mac_to_wake': 'm'})
        monitor.merge_report(sample, 'not a dict')
        self.assertEqual({'host_stats': {'vcpus': 4, 'memory_used': 1},
                          'instances': [1, 2], 'mac_to_wake': 'm'}, sample)


class RecordingConsumer(base.SchedulerConsumerPlugin):
    name = 'recording'

    def __init__(self):
        self.calls = []

    def update_from_compute_node(self, host_state, stats):
        self.calls.append(('update', dict(stats)))

    def consume_from_request(self, host_state, spec):
        self.calls.append(('consume', spec))


class TestConsumersFilterBookkeeping(unittest.TestCase):

    def test_reads_once_then_accounts_each_placement(self):
        from nova_drs.resources import scheduler
        consumers_filter = scheduler.ResourceConsumersFilter()
        consumer = RecordingConsumer()
        consumers_filter.consumers = [consumer]
        host_state = types.SimpleNamespace(host='h', stats={'k': 'v'}, num_instances=3)
        request = object()
        self.assertTrue(consumers_filter.host_passes(host_state, request))
        self.assertTrue(consumers_filter.host_passes(host_state, request))
        host_state.num_instances = 5  # nova placed two instances of this request
        consumers_filter.host_passes(host_state, request)
        self.assertEqual([('update', {'k': 'v'}), ('consume', request),
                          ('consume', request)], consumer.calls)


class TestHostLoad(unittest.TestCase):
    """The host's CPU % the monitor publishes is what the collector accepts."""

    def _cpu(self, driver_percent):
        from nova_drs.resources.plugins import host_load
        plugin = host_load.HostLoad()
        plugin.reset(base.HostResources('h', 'h', vcpus=4, memory_mb=0,
                                        cpu_percent=driver_percent), None)
        return plugin.report()['host_stats']['cpu_used_percent']

    def test_driver_percent_past_100_is_published_as_100(self):
        # nova's cpu.percent of a saturated host read between counter updates
        # (seen at 124-125 on the mini-cloud): the collector would refuse it.
        from nova_drs.stats import ingest
        self.assertEqual(100.0, self._cpu(124))
        self.assertEqual(ingest.BOUNDS['cpu_used_percent'][1], self._cpu(125))

    def test_driver_percent_within_bounds_is_kept(self):
        self.assertEqual(37.0, self._cpu(37))
        self.assertEqual(0.0, self._cpu(-3))
