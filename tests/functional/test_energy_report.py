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

"""GET /loadbalancer/energy and ``openstack drs report energy`` on the in-process API."""

import datetime
import json

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import hosts as db_hosts
from nova_drs.db import models
from tests.functional import test_cli_nova
from tests.functional import test_cli_openstack

# Idle 200 W on cluster1's hosts (aggregate metadata), the default curve elsewhere.
CURVE = '200,210,220,230,240,250,260,270,280,290,300'


class TestEnergyReport(test_cli_openstack.OpenStackShellMixin, test_cli_nova.CliTestCase):

    def setUp(self):
        super().setUp()
        aggregate = self.admin_api.post_aggregate(
            {'aggregate': {'name': 'cluster1', 'availability_zone': None}})
        for host in ('host1', 'host2'):
            self.admin_api.add_host_to_aggregate(aggregate['id'], host)
        self.admin_api.post_aggregate_action(aggregate['id'], {'set_metadata': {
            'metadata': {'drs_power_curve': CURVE}}})
        for host in self.COMPUTE_HOSTS:
            db_hosts.ensure(self.drs_db, host)
        # host1 has been suspended for two hours (suspending took no time).
        db_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'underload')
        db_hosts.transition(self.drs_db, 'host1', 'suspending', 'suspended', 'down')
        two_hours_ago = timeutils.utcnow() - datetime.timedelta(hours=2)
        with self.drs_db.writer() as session:
            session.execute(sa.update(models.DrsHostStateChange).values(
                changed_at=two_hours_ago))
        # nova-drs has known every host for a day.
        self.hosts_known_since(datetime.timedelta(days=1))

    def hosts_known_since(self, age, hosts=None):
        with self.drs_db.writer() as session:
            query = sa.update(models.DrsHost).values(created_at=timeutils.utcnow() - age)
            if hosts is not None:
                query = query.where(models.DrsHost.host.in_(hosts))
            session.execute(query)

    def get(self, query, api=None):
        response = (api or self.admin_api).api_request(
            '/loadbalancer/energy' + query, method='GET', check_response_status=None)
        return response.status_code, response.json()

    def test_cluster_report_prices_suspended_hours_with_the_aggregate_curve(self):
        status, body = self.get('?since=3h&cluster=cluster1')
        self.assertEqual(200, status, body)
        report = body['energy']
        self.assertEqual(('cluster1', 2), (report['cluster'], report['hosts']))
        self.assertAlmostEqual(2.0, report['suspended_host_hours'], places=2)
        # 2 h x (200 W idle - 5 W standby) saved; host1 1 h at 200 W + 2 h at 5 W,
        # host2 3 h at 200 W (no samples: idle).
        self.assertAlmostEqual(0.39, report['kwh_saved'], places=3)
        self.assertAlmostEqual(0.2 + 0.01 + 0.6, report['kwh_drawn'], places=3)
        self.assertEqual(0.0, report['measured_share'])
        status, body = self.get('?since=3h')
        self.assertEqual(3, body['energy']['hosts'])
        # host3 is outside cluster1: default curve, 100 W idle, for 3 hours.
        self.assertAlmostEqual(0.81 + 0.3, body['energy']['kwh_drawn'], places=3)

    def test_hosts_are_priced_from_their_first_record_only(self):
        # host2 and host3 appeared 30 minutes ago (a fresh cloud); host1's
        # history (suspended two hours ago) is older than its row: it counts
        # from that history.
        self.hosts_known_since(datetime.timedelta(minutes=30), ('host1', 'host2', 'host3'))
        status, body = self.get('?since=24h')
        self.assertEqual(200, status, body)
        report = body['energy']
        # host2 (200 W curve) and host3 (100 W) for half an hour each; host1
        # at 5 W standby for two hours, never before.
        self.assertAlmostEqual(0.1 + 0.05 + 0.01, report['kwh_drawn'], places=3)
        self.assertAlmostEqual(2.0, report['suspended_host_hours'], places=2)
        self.assertAlmostEqual(0.39, report['kwh_saved'], places=3)

    def test_bad_queries_are_clear_4xx(self):
        for query, code, fragment in (
                ('?since=yesterday', 400, 'neither a duration'),
                ('?since=2999-01-01T00:00:00', 400, 'not in the past'),
                ('?cluster=nosuch', 404, 'nosuch'),
                ('?limit=3', 400, "'limit' was unexpected")):
            with self.subTest(query=query):
                status, body = self.get(query)
                self.assertEqual(code, status, body)
                self.assertIn(fragment, next(iter(body.values()))['message'])
        status, _ = self.get('', api=self.api_fixture.api)
        self.assertEqual(403, status)

    def test_openstack_drs_report_energy(self):
        code, out, err = self.openstack('drs', 'report', 'energy', '--since', '3h',
                                        '--cluster', 'cluster1', '-f', 'json')
        self.assertEqual(0, code, err)
        report = json.loads(out)
        self.assertAlmostEqual(0.39, report['kWh Saved'], places=3)
        self.assertAlmostEqual(2.0, report['Suspended Host-Hours'], places=2)
        self.assertEqual(2, report['Hosts'])
        code, out, err = self.openstack('drs', 'report', 'energy', '--since', '3h',
                                        '--cluster', 'cluster1', '-c', 'Hosts',
                                        '-c', 'kWh Drawn', '-c', 'kWh Saved',
                                        '-c', 'Suspended Host-Hours', '-c', 'Migrations',
                                        '-c', 'Measured Share')
        self.assertEqual(0, code, err)
        self.assertIn('| Suspended Host-Hours |', out)
        print(out)  # the README example comes from this table (pytest -s)
        code, out, err = self.openstack('drs', 'report', 'energy', '--since', 'soon')
        self.assertEqual(1, code)
        self.assertIn('HTTP 400', err)
