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

"""What-if replay on real nova: the statistics store and cycle inventories the
daemon filled, replayed by ``nova-drs-sim --from-stats``, give the daemon's own
plans back, cycle by cycle, and the per-policy table."""

import datetime
import gzip
import os
import subprocess
import sys

from nova_drs import conf as drs_conf
from nova_drs.daemon import planning
from nova_drs.db import api as db_api
from nova_drs.db import cycle_inventory
from nova_drs.db import models
from nova_drs.loadbalancer import catalog
from nova_drs.sim import stats_replay
from tests.functional import daemon_support
from tests.functional.test_daemon_cycle import DaemonTestBase

SIM = os.path.join(os.path.dirname(sys.executable), 'nova-drs-sim')


class TestWhatIfReplay(DaemonTestBase):

    def _consolidate(self):
        """The TestUnderload scenario: host1 emptied and suspended; every summary."""
        servers = [self._create_server(name='a1', host='host1', networks='none')] + [
            self._create_server(name='b%d' % i, host=h, networks='none')
            for i, h in enumerate(('host2', 'host2', 'host3', 'host3'))]
        load = {s['id']: (self.server_host(s['id']), 5.0 if i == 0 else 40.0)
                for i, s in enumerate(servers)}
        daemon_support.record_load(self.drs_db, {'host1': 1.0, 'host2': 10.0, 'host3': 10.0},
                                   load)
        summaries = []
        for _ in range(8):
            summaries.append(self.cycle())
            if self.state('host1') == 'suspended':
                break
        self.assertEqual('suspended', self.state('host1'))
        return summaries

    def test_replay_reproduces_the_daemons_plans_and_prints_the_table(self):
        start = datetime.datetime.utcnow() - datetime.timedelta(minutes=1)
        summaries = self._consolidate()
        planned = [cycle_inventory.plan_key([cycle_inventory.recorded(a) for a in s['actions']])
                   for s in summaries]
        self.assertTrue(any(planned), 'the daemon planned nothing: nothing to reproduce')

        dataset = stats_replay.load(self.drs_db, start)
        outcomes = stats_replay.reproduce(
            dataset, planning.ClusterPlanner(drs_conf.CONF, catalog.by_name(self.POLICY)))
        self.assertEqual(len(summaries), len(outcomes))
        for returned, (_now, recorded, replayed) in zip(planned, outcomes, strict=True):
            self.assertEqual(returned, cycle_inventory.plan_key(recorded))
            self.assertEqual(returned, cycle_inventory.plan_key(replayed))
        # what the daemon started is what lb_plans stored
        with self.drs_db.reader() as session:
            stored = [row.actions for row in session.query(models.LbPlan)]
        self.assertTrue(stored)

        url = db_api.connection_from_conf(drs_conf.CONF)
        export = os.path.join(self.state_dir, 'whatif.json.gz')
        policies = ['--policy', 'drs', '--policy', 'lr_mmt_1.2',
                    '--policy', 'even_distribution']
        result = self._sim('--from-stats', '--since', '1h', '--connection', url,
                           '--export', export, *policies)
        lines = result.stdout.splitlines()
        self.assertEqual('exported %d cycles to %s' % (len(summaries), export), lines.pop(0))
        self.assertIn('%d cycles recorded' % len(summaries), lines[0])
        self.assertIn('the replay plans %d of them exactly as the daemon did'
                      % len(summaries), lines[0])
        header = lines[1].split()
        for column in ('energy', 'migrations', 'SLAV', 'PDM', 'SLATAH', 'peak', 'ping-pong'):
            self.assertIn(column, header)
        rows = {line.split()[0]: line.split() for line in lines[2:5]}
        self.assertEqual({'drs', 'lr_mmt_1.2', 'even_distribution'}, set(rows))
        # the drs replay empties host1 as the daemon did: at least one migration
        self.assertGreaterEqual(int(rows['drs'][2]), 1)
        self._check_export(export, lines, policies)

    def _sim(self, *args):
        result = subprocess.run([SIM, *args], capture_output=True, text=True, timeout=120,
                                check=False)
        self.assertEqual(0, result.returncode, result.stderr)
        return result

    def _check_export(self, export, lines, policies):
        """No host name, UUID or project id leaves; the import replays the same."""
        with open(export, 'rb') as handle:
            text = gzip.decompress(handle.read()).decode()
        secrets = set(self.COMPUTE_HOSTS) | {self.admin_api.project_id, 'cluster1'}
        secrets |= {s['id'] for s in self.admin_api.get_servers()}
        secrets |= {s['tenant_id'] for s in self.admin_api.get_servers()}
        for secret in secrets:
            self.assertNotIn(secret, text)
        imported = self._sim('--import', export, *policies).stdout.splitlines()
        self.assertEqual(lines, imported)
