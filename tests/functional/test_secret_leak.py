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

"""The secret-leak test: a known BMC password, set through both CLIs with
``--debug``, appears nowhere but in the power driver's hands.

Searched: every API response, every CLI output (stdout and stderr, debug
included), every log line of this process (nova-api, the DRS API, the
daemon, the clients' keystoneauth request logs), ``/metrics``, ``explain``,
the daemon's ``--dry-run`` report, ``nova-drs-sim --export`` and the
``drs_hosts`` rows every API and scheduler node can read. The daemon still
logs in to both Redfish BMCs with it (their power readings are stored).
"""

import json
import logging
import os
import subprocess
import sys
import urllib.request

import fixtures
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs.cmd import loadbalancer as lb_cmd
from nova_drs.daemon import power as daemon_power
from nova_drs.daemon import service
from nova_drs.db import api as db_api
from nova_drs.db import models
from nova_drs.loadbalancer import catalog
from nova_drs.observability import metrics
from tests import peers
from tests.functional import daemon_support
from tests.functional import test_cli_nova
from tests.functional import test_cli_openstack

SECRET = 'Leak-Canary-7f3a9'


class _Everything(logging.Handler):
    """Keeps every record of every logger, fully formatted."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append('%s %s' % (record.name, record.getMessage()))


class TestNoSecretLeaks(test_cli_nova.CliTestCase):
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'
    EXTRA_FLAGS = {('loadbalancer', 'host_cooldown'): '0',
                   ('drs_energy', 'power_readings_per_cycle'): '2',
                   ('drs_power', 'timeout'): '10'}

    def setUp(self):
        super().setUp()
        self.logs = _Everything()
        root = logging.getLogger()
        root.addHandler(self.logs)
        self.addCleanup(root.removeHandler, self.logs)
        for name in ('', 'keystoneauth', 'nova_drs', 'novaclient'):
            logger = logging.getLogger(name)
            self.addCleanup(logger.setLevel, logger.level)
            logger.setLevel(logging.DEBUG)
        self.outputs = []  # every API body and CLI output, with where it came from
        workdir = self.useFixture(fixtures.TempDir()).path
        self.bmcs = {}
        for host, watts in (('host2', 212.5), ('host3', 230.0)):
            os.makedirs(os.path.join(workdir, host))
            self.bmcs[host] = peers.start_redfish_emulator(
                os.path.join(workdir, host), 'admin', SECRET, watts=watts)
            self.addCleanup(self.bmcs[host].stop)

    def nova(self, *argv):
        return test_cli_nova.TestNovaShell.nova(self, *argv)

    def openstack(self, *argv):
        test_cli_openstack.osc_environment(self)
        return test_cli_openstack.TestOpenStackShell.openstack(self, *argv)

    osc_auth_args = staticmethod(test_cli_openstack.TestOpenStackShell.osc_auth_args)

    def keep(self, where, result):
        code, out, err = result
        self.outputs.append((where, out + err))
        self.assertEqual(0, code, '%s: %s' % (where, err))
        return out

    def get(self, path):
        status, body = self.call(self.admin_api, 'GET', path)
        self.assertEqual(200, status, body)
        self.outputs.append(('GET ' + path, json.dumps(body)))
        return body

    def test_known_password_is_never_shown_and_still_powers_the_bmcs(self):
        bmc2, bmc3 = self.bmcs['host2'], self.bmcs['host3']
        self.keep('nova --debug lb-host-set-power', self.nova(
            '--debug', 'lb-host-set-power', 'host2', '--driver', 'redfish',
            '--option', 'url=%s' % bmc2.url, '--option', 'username=admin',
            '--option', 'password=%s' % SECRET, '--option', 'system_id=%s' % bmc2.system_id))
        # Both CLIs' outputs after the two have run: nova's first (its env).
        for argv in (('--debug', 'lb-host-show', 'host2'), ('--debug', 'lb-host-list',
                                                            '--detail')):
            self.keep('nova ' + ' '.join(argv), self.nova(*argv))
        self.keep('openstack --debug drs host set', self.openstack(
            '--debug', 'drs', 'host', 'set', 'host3', '--power-driver', 'redfish',
            '--power-option', 'url=%s' % bmc3.url, '--power-option', 'username=admin',
            '--power-option', 'password=%s' % SECRET,
            '--power-option', 'system_id=%s' % bmc3.system_id, '-f', 'json'))
        for argv in (('drs', 'host', 'show', 'host3', '-f', 'json'),
                     ('drs', 'host', 'list', '--long', '-f', 'json')):
            self.keep('openstack --debug ' + ' '.join(argv), self.openstack('--debug', *argv))

        # The daemon: a dry run, then real cycles that log in to both BMCs.
        nova = daemon_support.nova_api_for(self)
        balancer = service.LoadBalancer(drs_conf.CONF, nova, self.drs_db,
                                        catalog.by_name('drs'),
                                        daemon_power.drivers_for(drs_conf.CONF, self.drs_db))
        daemon_support.record_load(self.drs_db, {h: 10.0 for h in self.COMPUTE_HOSTS}, {})
        self.outputs.append(('nova-loadbalancer --dry-run', lb_cmd.dry_run_report(
            balancer.run_cycle(dry_run=True))))
        balancer.run_cycle()
        with self.drs_db.reader() as session:
            readings = dict(session.execute(sa.select(
                models.DrsPowerReading.host, models.DrsPowerReading.watts)).all())
            stored = dict(session.execute(sa.select(
                models.DrsHost.host, models.DrsHost.power_options)).all())
        self.assertEqual({'host2': 212.5, 'host3': 230.0}, readings)  # the password worked
        self.outputs.append(('drs_hosts rows', json.dumps(stored)))

        for path in ('/loadbalancer', '/loadbalancer/host2', '/loadbalancer/host3',
                     '/loadbalancer/explain/hosts/host2?cycles=10',
                     '/loadbalancer/explain/hosts/host3?cycles=10'):
            self.get(path)
        self.keep('openstack drs explain', self.openstack('--debug', 'drs', 'explain', 'host',
                                                          'host3'))
        server = metrics.serve('127.0.0.1', 0, self.drs_db, drs_conf.CONF)
        self.addCleanup(server.shutdown)
        with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % server.server_port,
                                    timeout=10) as response:
            self.outputs.append(('/metrics', response.read().decode()))
        export = os.path.join(self.state_dir, 'export.json')
        sim = subprocess.run(
            [sys.executable, '-m', 'nova_drs.cmd.sim', '--from-stats', '--connection',
             db_api.connection_from_conf(drs_conf.CONF), '--since', '1h',
             '--export', export], capture_output=True, text=True, timeout=300)
        self.outputs.append(('nova-drs-sim --export output', sim.stdout + sim.stderr))
        if os.path.exists(export):
            with open(export) as exported:
                self.outputs.append(('nova-drs-sim --export file', exported.read()))
        self.outputs.append(('log lines', '\n'.join(self.logs.lines)))

        leaks = [where for where, text in self.outputs if SECRET in text]
        self.assertEqual([], leaks)
        # The search saw what it must: both clients' request bodies were logged
        # (masked), and the export was written.
        logged = '\n'.join(self.logs.lines)
        self.assertEqual(2, logged.count('"password": "***"'), 'request bodies not logged')
        self.assertIn('nova-drs-sim --export file', [where for where, _ in self.outputs])
