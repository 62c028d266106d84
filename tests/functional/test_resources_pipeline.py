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

"""Resource plugins, scheduler consumers and the statistics pipeline on real nova."""

import time

import netifaces
from nova import context as nova_context
from nova import objects
from nova.tests.functional.api import client

from nova_drs import conf as drs_conf
from nova_drs.db import hosts as db_hosts
from nova_drs.db import statistics as db_statistics
from nova_drs.resources import alias
from nova_drs.resources import base as resources_base
from nova_drs.stats import collector
from nova_drs.stats import publisher
from tests.functional import base
from tests.functional import fake_drivers

# Production installs the monitor alias with nova_drs-monitor.pth (see
# nova_drs.resources.alias); nova 34 also only loads compute drivers from
# nova.virt, so the test driver gets an alias there too.
alias.install(**{'nova.virt.drs_fake_drivers': 'tests.functional.fake_drivers'})

FILTER = 'nova_drs.resources.scheduler.ResourceConsumersFilter'
HERE = __name__
DRS_KEYS = ('drs_cpu_used_percent', 'drs_memory_used_mb', 'drs_memory_total_mb',
            'drs_cu_total', 'drs_cu_used')


class RecordingConsumer(resources_base.SchedulerConsumerPlugin):
    """Remembers the stats each host state carried into the scheduler."""

    SEEN = {}

    def update_from_compute_node(self, host_state, stats):
        self.SEEN[host_state.host] = dict(stats)


class FailingResource(resources_base.ComputeResourcePlugin):
    def _fail(self, *args):
        raise RuntimeError('resource plugin broken on purpose')

    reset = add_instance = remove_instance = test = write = report = _fail


class FailingConsumer(resources_base.SchedulerConsumerPlugin):
    def _fail(self, *args):
        raise RuntimeError('consumer plugin broken on purpose')

    update_from_compute_node = consume_from_request = host_passes = _fail


def interface_with_mac():
    """(IPv4, MAC) of a real interface of this machine."""
    for name in netifaces.interfaces():
        addresses = netifaces.ifaddresses(name)
        links = [entry['addr'] for entry in addresses.get(netifaces.AF_LINK, [])
                 if entry.get('addr') not in (None, '00:00:00:00:00:00')]
        ipv4 = addresses.get(netifaces.AF_INET, [])
        if links and ipv4:
            return ipv4[0]['addr'], links[0]
    raise AssertionError('this machine has no interface with an IPv4 and a MAC address')


class ResourcesTestCase(base.DrsFunctionalTestCase):
    COMPUTE_DRIVER = 'drs_fake_drivers.LoadDriver'
    CONSUMERS = 'host_load,compute_units,%s:RecordingConsumer' % HERE
    RESOURCES = 'host_load,instance_stats,compute_units,wake_address'

    def setUp(self):
        self.EXTRA_FLAGS = dict(self.EXTRA_FLAGS)
        self.EXTRA_FLAGS.update({
            ('filter_scheduler', 'available_filters'):
                ['nova.scheduler.filters.all_filters', FILTER],
            ('filter_scheduler', 'enabled_filters'):
                ['ComputeFilter', 'ResourceConsumersFilter'],
            ('drs_resources', 'compute_resources'): self.RESOURCES,
            ('drs_resources', 'scheduler_consumers'): self.CONSUMERS,
        })
        RecordingConsumer.SEEN.clear()
        fake_drivers.LoadDriver.LOADS.clear()
        publisher._transports.clear()
        super().setUp()
        self.ctxt = nova_context.get_admin_context()

    def compute_stats(self, host):
        return objects.ComputeNode.get_by_nodename(self.ctxt, host).stats

    def start_collector(self):
        service = collector.CollectorService(drs_conf.CONF, self.drs_db)
        service.start()
        self.addCleanup(service.stop)
        return service

    def wait_for(self, predicate, message, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = predicate()
            if result:
                return result
            time.sleep(0.1)
        self.fail(message)


class TestStatsReachSchedulerAndDatabase(ResourcesTestCase):

    def setUp(self):
        self.my_ip, self.mac = interface_with_mac()
        self.EXTRA_FLAGS = {('DEFAULT', 'my_ip'): self.my_ip}
        super().setUp()

    def test_operator_config_enables_monitor(self):
        conf = drs_conf.CONF
        self.assertEqual(['cpu.drs'], conf.compute_monitors)
        monitors = self.computes['host1'].manager.rt.monitors
        self.assertEqual(['DrsMonitor'], [type(m).__name__ for m in monitors])

    def test_stats_in_host_state_and_database(self):
        server = self._create_server(networks='none')
        server_host = self.server_host(server['id'])
        fake_drivers.LoadDriver.LOADS[server['id']] = {
            'cpu_percent': 50, 'memory_mb': 300, 'iops': 40}
        self.start_collector()
        self._run_periodics()
        time.sleep(0.5)
        self._run_periodics()

        for host in self.COMPUTE_HOSTS:
            stats = self.compute_stats(host)
            for key in DRS_KEYS:
                self.assertIn(key, stats, host)
            self.assertGreater(float(stats['drs_memory_total_mb']), 0)
            # the driver knows the host's CPU use better than psutil here
            self.assertAlmostEqual(fake_drivers.LoadDriver.HOST_CPU_PERCENT,
                                   float(stats['drs_cpu_used_percent']), delta=1)
        # nova's cpu.* metrics are still there for MetricsFilter/MetricsWeigher
        metrics = objects.ComputeNode.get_by_nodename(self.ctxt, 'host1').metrics
        self.assertIn('"cpu.percent"', metrics)

        self._create_server(networks='none')
        self.assertEqual(set(self.COMPUTE_HOSTS), set(RecordingConsumer.SEEN))
        for host, stats in RecordingConsumer.SEEN.items():
            self.assertEqual(self.compute_stats(host)['drs_cu_total'], stats['drs_cu_total'])
            for key in DRS_KEYS:
                self.assertIn(key, stats, host)
        vcpus = objects.ComputeNode.get_by_nodename(self.ctxt, server_host).vcpus
        self.assertEqual(str(vcpus * 10), RecordingConsumer.SEEN[server_host]['drs_cu_total'])

        self.wait_for(lambda: all(len(db_statistics.latest(self.drs_db, host, 5)) >= 2
                                  for host in self.COMPUTE_HOSTS),
                      'collector did not store two samples per host')
        newest = db_statistics.latest(self.drs_db, server_host, 1)[0]
        self.assertGreater(newest['memory_total'], 0)
        samples = db_statistics.latest_instances(self.drs_db, [server['id']], 2)[server['id']]
        self.assertEqual(2, len(samples))
        self.assertAlmostEqual(50.0, samples[0]['cpu_used_percent'], delta=5)
        self.assertIsNone(samples[1]['cpu_used_percent'])  # first sample: no baseline
        self.assertEqual(300, samples[0]['mem'])
        self.assertAlmostEqual(40.0, samples[0]['iops'], delta=8)
        for host in self.COMPUTE_HOSTS:
            self.assertEqual(self.mac, db_hosts.get(self.drs_db, host)['mac_to_wake'])


class TestComputeUnits(ResourcesTestCase):
    EXTRA_FLAGS = {('drs_resources', 'compute_units'): 10}
    RESOURCES = 'compute_units'
    CONSUMERS = 'compute_units'

    def boot(self, flavor_id, expected_state='ACTIVE'):
        server = self._create_server(flavor_id=flavor_id, networks='none',
                                     expected_state=expected_state)
        self._run_periodics()
        return server

    def live_migrate(self, server, host):
        self.api.post_server_action(server['id'], {'os-migrateLive': {
            'host': host, 'block_migration': 'auto'}})
        self.complete_live_migration(server)
        self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': host, 'status': 'ACTIVE'})

    def cu_used(self, host):
        return int(self.compute_stats(host)['drs_cu_used'])

    def test_cu_follow_boot_migration_and_delete(self):
        flavor = self._create_flavor(memory_mb=512, vcpu=1, disk=1, ephemeral=0,
                                     extra_spec={'drs:cu': '6'})
        self._run_periodics()
        first = self.boot(flavor)
        second = self.boot(flavor)
        first_host, second_host = self.server_host(first['id']), self.server_host(second['id'])
        self.assertNotEqual(first_host, second_host)
        (free_host,) = set(self.COMPUTE_HOSTS) - {first_host, second_host}
        self.assertEqual(6, self.cu_used(first_host))
        self.assertEqual(0, self.cu_used(free_host))

        self.live_migrate(first, free_host)
        self._run_periodics()
        self.assertEqual(free_host, self.server_host(first['id']))
        self.assertEqual(0, self.cu_used(first_host))
        self.assertEqual(6, self.cu_used(free_host))

        third = self.boot(flavor)
        self.assertEqual(first_host, self.server_host(third['id']))
        self.boot(flavor, expected_state='ERROR')  # 4 cu free everywhere

        self._delete_server(second)
        self._run_periodics()
        self.assertEqual(0, self.cu_used(second_host))
        fifth = self.boot(flavor)
        self.assertEqual(second_host, self.server_host(fifth['id']))

    def test_back_to_back_boots_within_one_period(self):
        flavor = self._create_flavor(memory_mb=512, vcpu=1, disk=1, ephemeral=0,
                                     extra_spec={'drs:cu': '6'})
        self._run_periodics()
        servers = [self._create_server(flavor_id=flavor, networks='none')
                   for _ in self.COMPUTE_HOSTS]  # no resource tracker period between
        self.assertEqual(set(self.COMPUTE_HOSTS),
                         {self.server_host(server['id']) for server in servers})
        self._create_server(flavor_id=flavor, networks='none', expected_state='ERROR')

    def test_invalid_cu_extra_spec_is_refused_by_the_api(self):
        flavor = self._create_flavor(memory_mb=512, vcpu=1, disk=1, ephemeral=0)
        for bad in ('lots', '-1'):
            error = self.assertRaises(
                client.OpenStackApiException, self.admin_api.post_extra_spec,
                flavor, {'extra_specs': {'drs:cu': bad}})
            self.assertEqual(400, error.response.status_code)

    def test_one_request_for_two_instances_spreads_by_cu(self):
        flavor = self._create_flavor(memory_mb=512, vcpu=1, disk=1, ephemeral=0,
                                     extra_spec={'drs:cu': '6'})
        self._run_periodics()
        self.api.post_server({'server': {
            'name': 'pair', 'flavorRef': flavor, 'networks': 'none',
            'imageRef': '155d900f-4e14-4e4c-a73d-069cbf4541e6',
            'min_count': 2, 'max_count': 2}})
        servers = self.wait_for(
            lambda: [s for s in self.api.get_servers(detail=True)
                     if s['status'] == 'ACTIVE'] if len(
                [s for s in self.api.get_servers(detail=True)
                 if s['status'] == 'ACTIVE']) == 2 else None,
            'two servers did not become ACTIVE')
        hosts = {self.server_host(server['id']) for server in servers}
        self.assertEqual(2, len(hosts))


class TestFailingPluginsAreIsolated(ResourcesTestCase):
    RESOURCES = 'host_load,%s:FailingResource' % HERE
    CONSUMERS = 'compute_units,%s:FailingConsumer' % HERE

    def errors(self, plugin):
        return [line for line in self.stdlog.logger.output.splitlines()
                if '%s failed' % plugin in line]

    def test_compute_updates_and_scheduler_schedules(self):
        # each compute already ran one period when it started
        self.assertEqual(len(self.COMPUTE_HOSTS), len(self.errors('FailingResource')))
        self._run_periodics()
        self._run_periodics()
        compute_errors = self.errors('FailingResource')
        self.assertEqual(3 * len(self.COMPUTE_HOSTS), len(compute_errors), compute_errors)
        for host in self.COMPUTE_HOSTS:
            self.assertIn('drs_cpu_used_percent', self.compute_stats(host))

        for index in range(2):
            server = self._create_server(name='vm%d' % index, networks='none')
            self.assertEqual('ACTIVE', server['status'])
        consumer_errors = self.errors('FailingConsumer')
        self.assertEqual(1, len(consumer_errors), consumer_errors)
