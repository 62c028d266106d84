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

"""/metrics on real nova: a consolidation cycle, then a scrape over HTTP on loopback."""

import datetime
import os
import urllib.request

import fixtures
from oslo_utils import timeutils
from prometheus_client import parser
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs.db import models
from nova_drs.observability import metrics
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle


def scrape(server):
    url = 'http://127.0.0.1:%d/metrics' % server.server_port
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    samples = {}
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


class TestMetricsAfterConsolidation(test_daemon_cycle.DaemonTestBase):

    def setUp(self):
        super().setUp()
        self.server = metrics.serve('127.0.0.1', 0, self.drs_db, drs_conf.CONF)
        self.addCleanup(self.server.shutdown)

    def test_scrape_shows_what_the_database_recorded(self):
        before = scrape(self.server)
        requests_before = before.get(('nova_drs_api_requests_total',
                                      (('method', 'GET'), ('service', 'compute'))), 0)
        # In-process instruments are process-wide: earlier tests' cycles count too.
        plans_before = before.get(('nova_drs_cycle_phase_seconds_count',
                                   (('phase', 'plan'),)), 0)
        self.quiet_host1()
        cycles = 0
        while cycles < 8:
            self.cycle()
            cycles += 1
            if self.state('host1') == 'suspended':
                break
        self.assertEqual('suspended', self.state('host1'))

        samples = scrape(self.server)
        with self.drs_db.reader() as session:
            migrations = session.execute(sa.select(
                models.LbMigration.status, models.LbMigration.reason)).all()
            suspended_at = session.execute(sa.select(models.DrsHost.state_changed_at).where(
                models.DrsHost.host == 'host1')).scalar_one()
        self.assertEqual([('done', 'evacuating host for suspend')], migrations)
        self.assertEqual(1, samples[('nova_drs_migrations_requested_last_hour',
                                     (('reason', 'evacuate'),))])
        self.assertEqual(1, samples[('nova_drs_migrations_finished_last_hour',
                                     (('reason', 'evacuate'), ('status', 'done')))])
        self.assertEqual(0, samples[('nova_drs_migrations_in_progress', ())])
        self.assertEqual(1, samples[('nova_drs_hosts',
                                     (('cluster', 'cluster1'), ('state', 'suspended')))])
        self.assertEqual(2, samples[('nova_drs_hosts',
                                     (('cluster', 'cluster1'), ('state', 'active')))])
        self.assertEqual(1, samples[('nova_drs_host_transitions_last_hour',
                                     (('state', 'suspending'),))])
        self.assertEqual(1, samples[('nova_drs_host_transitions_last_hour',
                                     (('state', 'suspended'),))])
        self.assertEqual(0, samples[('nova_drs_hosts_in_error', ())])
        self.assertEqual(0, samples[('nova_drs_stale_hosts', ())])
        self.assertEqual(0, samples[('nova_drs_plans_pending', ())])
        self.assertEqual(1, samples[('nova_drs_database_up', ())])
        # 12 samples per host (record_load), 12 for each of the 3 servers.
        self.assertEqual(36, samples[('nova_drs_stats_samples', (('kind', 'host'),))])
        self.assertEqual(36, samples[('nova_drs_stats_samples', (('kind', 'instance'),))])
        # Default curve: 120 W at 10 % CPU (host2, host3), 100 W idle; 5 W suspended.
        self.assertEqual(245.0, samples[('nova_drs_power_drawn_watts',
                                         (('cluster', 'cluster1'),))])
        self.assertEqual(95.0, samples[('nova_drs_power_saved_watts',
                                        (('cluster', 'cluster1'),))])
        seconds = (timeutils.utcnow() - suspended_at).total_seconds()
        saved = samples[('nova_drs_energy_saved_kwh_last_day', ())]
        self.assertGreater(saved, 0)
        self.assertLessEqual(saved, 95.0 * (seconds + 1) / 3.6e6 + 1e-4)
        self.assertEqual(cycles, samples[('nova_drs_cycle_phase_seconds_count',
                                          (('phase', 'plan'),))] - plans_before)
        self.assertGreater(samples[('nova_drs_api_requests_total',
                                    (('method', 'GET'), ('service', 'compute')))],
                           requests_before)
        self.assertGreater(samples[('nova_drs_api_requests_total',
                                    (('method', 'POST'), ('service', 'compute')))], 0)

    def test_wake_latency_and_error_hosts_come_from_history(self):
        from nova_drs.db import hosts as drs_hosts
        for host in self.COMPUTE_HOSTS:
            drs_hosts.ensure(self.drs_db, host)
        for from_state, to_state in (('active', 'suspending'), ('suspending', 'suspended'),
                                     ('suspended', 'waking')):
            drs_hosts.transition(self.drs_db, 'host2', from_state, to_state, 'test')
        with self.drs_db.writer() as session:
            session.execute(sa.update(models.DrsHostStateChange).where(
                models.DrsHostStateChange.state == 'waking').values(
                    changed_at=timeutils.utcnow() - datetime.timedelta(seconds=90)))
        drs_hosts.transition(self.drs_db, 'host2', 'waking', 'active', 'woke')
        drs_hosts.transition(self.drs_db, 'host3', 'active', 'suspending', 'test')
        drs_hosts.transition(self.drs_db, 'host3', 'suspending', 'error', 'bmc down')
        daemon_support.record_load(self.drs_db, {h: 10.0 for h in self.COMPUTE_HOSTS}, {})
        samples = scrape(self.server)
        self.assertEqual(1, samples[('nova_drs_wake_latency_seconds_count', ())])
        self.assertEqual(1, samples[('nova_drs_wake_latency_seconds_bucket',
                                     (('le', '120.0'),))])
        self.assertEqual(0, samples[('nova_drs_wake_latency_seconds_bucket',
                                     (('le', '60.0'),))])
        self.assertEqual(1, samples[('nova_drs_hosts_in_error', ())])


class TestOscillationGuard(test_daemon_cycle.DaemonTestBase):

    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('drs_oscillation', 'max_moves_per_server'): '2'}

    def test_server_moved_too_often_keeps_host_on_and_is_reported(self):
        server, _others = self.quiet_host1()
        from nova_drs.db import lb_migrations
        # Two moves two hours ago: past migration_cooldown (the planner would
        # keep the host on for that alone), within oscillation_window (a day).
        for _ in range(2):
            lb_migrations.finish(self.drs_db, lb_migrations.request(
                self.drs_db, server['id'], 'host2', 'host1', 'live', 'overload'), 'done')
        with self.drs_db.writer() as session:
            session.execute(sa.update(models.LbMigration)
                            .where(models.LbMigration.instance_uuid == server['id'])
                            .values(created_at=timeutils.utcnow()
                                    - datetime.timedelta(hours=2)))
        held = []
        for _ in range(3):
            held.extend(self.cycle()['held'])
        self.assertEqual('active', self.state('host1'))
        self.assertEqual('host1', self.server_host(server['id']))
        # The planner knows the server is held: it keeps host1 on and may
        # empty another host instead, never host1.
        self.assertNotIn(('suspend', 'host1'), self.power.calls)
        self.assertEqual({(server['id'], 'host1', 2)},
                         {(h['instance'], h['host'], h['moves']) for h in held})
        self.assertEqual(1, metrics.REGISTRY.get_sample_value('nova_drs_servers_held'))


class TestMeasuredPower(test_daemon_cycle.DaemonTestBase):
    """BMC readings over Redfish (sushy-tools' emulator) feed metrics and energy."""

    # Three active hosts stay active: nothing moves, only the power is read.
    CLUSTER_METADATA = {'drs_policy': 'power_saving', 'min_active_hosts': '3'}
    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('drs_energy', 'power_readings_per_cycle'): '1',
                   ('drs_power', 'timeout'): '5'}

    def setUp(self):
        super().setUp()
        from nova_drs.daemon import power as daemon_power
        from nova_drs.daemon import service
        from nova_drs.loadbalancer import catalog
        from tests import peers
        workdir = self.useFixture(fixtures.TempDir()).path
        self.bmcs = {}
        for host, watts in (('host2', 212.5), ('host3', 230.0)):
            os.makedirs(os.path.join(workdir, host))
            self.bmcs[host] = peers.start_redfish_emulator(
                os.path.join(workdir, host), 'admin', 'rf-S3cret', watts=watts)
            self.addCleanup(self.bmcs[host].stop)
            self.admin_api.api_post('/loadbalancer/action', {
                'set_power': {'host': host, 'driver': 'redfish', 'options': {
                    'url': self.bmcs[host].url, 'username': 'admin',
                    'password': 'rf-S3cret', 'system_id': self.bmcs[host].system_id}}},
                check_response_status=[200])
        real = daemon_power.drivers_for(drs_conf.CONF, self.drs_db)

        def drivers(record):
            return real(record) if record['host'] in self.bmcs else self.power(record)
        self.balancer = service.LoadBalancer(drs_conf.CONF, self.nova, self.drs_db,
                                             catalog.by_name(self.POLICY), drivers)
        self.server = metrics.serve('127.0.0.1', 0, self.drs_db, drs_conf.CONF)
        self.addCleanup(self.server.shutdown)
        daemon_support.record_load(self.drs_db, {h: 10.0 for h in self.COMPUTE_HOSTS}, {})

    def readings(self):
        with self.drs_db.reader() as session:
            return session.execute(sa.select(
                models.DrsPowerReading.host, models.DrsPowerReading.watts).order_by(
                    models.DrsPowerReading.id)).all()

    def test_readings_rotate_within_the_limit_and_replace_the_model(self):
        measured_before = scrape(self.server).get(
            ('nova_drs_cycle_phase_seconds_count', (('phase', 'measure'),)), 0)
        self.cycle()
        self.assertEqual([('host2', 212.5)], self.readings())  # one BMC per cycle
        self.cycle()
        self.assertEqual([('host2', 212.5), ('host3', 230.0)], self.readings())
        self.cycle()
        self.assertEqual(['host2', 'host3', 'host2'], [h for h, _ in self.readings()])

        samples = scrape(self.server)
        self.assertEqual(2, samples[('nova_drs_power_measured_hosts',
                                     (('cluster', 'cluster1'),))])
        # host1 modelled: 120 W at 10 % CPU on the default curve.
        self.assertEqual(120.0 + 212.5 + 230.0, samples[('nova_drs_power_drawn_watts',
                                                         (('cluster', 'cluster1'),))])
        self.assertEqual(3, samples[('nova_drs_cycle_phase_seconds_count',
                                     (('phase', 'measure'),))] - measured_before)

        report = self.admin_api.api_request('/loadbalancer/energy?since=1h',
                                            method='GET').json()['energy']
        sources = {h['host']: h['source'] for h in report['per_host']}
        self.assertEqual({'host1': 'modelled', 'host2': 'measured', 'host3': 'measured'},
                         sources)
        self.assertGreater(report['measured_share'], 0.6)
        self.assertEqual(2, report['measured_hosts'])

    def test_bmc_without_a_figure_is_not_asked_again_until_its_settings_change(self):
        from tests import peers
        workdir = self.useFixture(fixtures.TempDir()).path
        bare = peers.start_redfish_emulator(workdir, 'admin', 'rf-S3cret')  # no Power
        self.addCleanup(bare.stop)
        options = {'url': bare.url, 'username': 'admin', 'password': 'rf-S3cret',
                   'system_id': bare.system_id}
        self.admin_api.api_post('/loadbalancer/action', {'set_power': {
            'host': 'host2', 'driver': 'redfish', 'options': options}},
            check_response_status=[200])
        self.flags(power_readings_per_cycle=2, group='drs_energy')
        meter = self.balancer.power_meter
        self.cycle()
        self.assertEqual([('host3', 230.0)], self.readings())
        self.assertIn('host2', meter.no_figure)
        self.cycle()  # host2 is not asked again: only host3 is read
        self.assertEqual([('host3', 230.0)] * 2, self.readings())
        # New settings (its measuring BMC again): read at the next cycle.
        options.update(url=self.bmcs['host2'].url, system_id=self.bmcs['host2'].system_id)
        self.admin_api.api_post('/loadbalancer/action', {'set_power': {
            'host': 'host2', 'driver': 'redfish', 'options': options}},
            check_response_status=[200])
        self.cycle()
        self.assertEqual(('host2', 212.5), tuple(self.readings()[-2]))

    def test_silent_bmc_costs_its_reading_not_the_cycle(self):
        self.bmcs['host2'].stop()
        self.flags(power_readings_per_cycle=2, group='drs_energy')
        summary = self.cycle()
        self.assertNotIn('skipped', summary)
        self.assertEqual([('host3', 230.0)], self.readings())
