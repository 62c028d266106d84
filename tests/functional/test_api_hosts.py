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

"""GET /loadbalancer and POST /loadbalancer/action through nova-api's real pipeline."""

import datetime
import json

from oslo_config import cfg

from nova_drs import conf as drs_conf  # registers [drs] before base sets flags
from nova_drs import exception
from nova_drs.conf import power as power_conf
from nova_drs.daemon import power as daemon_power
from nova_drs.db import hosts as db_hosts
from nova_drs.db import models
from nova_drs.power import sealing
from tests.functional import api_base


class TestHostListWithServer(api_base.ServersApiTestCase):
    """The instance count needs a server nova scheduled and built."""

    def test_admin_lists_every_compute_host_with_nova_figures(self):
        server = self._create_server(networks='none')
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer')
        self.assertEqual(200, status)
        hosts = {host['host']: host for host in body['hosts']}
        self.assertEqual(set(self.COMPUTE_HOSTS), set(hosts))
        used = self.server_host(server['id'])
        self.assertEqual(1, hosts[used]['instances'])
        self.assertEqual(1, sum(host['instances'] for host in hosts.values()))
        for host in hosts.values():
            self.assertEqual('active', host['suspend_state'])
            self.assertGreater(host['vcpus'], 0)
            self.assertGreater(host['memory_total'], 0)
            self.assertIsNone(host['cpu_used_percent'])
            self.assertNotIn('power_options', host)


class TestHostList(api_base.DrsApiTestCase):

    def test_latest_statistics_sample_is_shown(self):
        now = datetime.datetime(2026, 11, 22, 12, 0, 0)
        with self.drs_db.writer() as session:
            for minutes, cpu in ((0, 10.0), (5, 42.5)):
                session.add(models.ComputeNodeStats(
                    host='host2', cpu_used_percent=cpu, memory_used=1000 + minutes,
                    memory_total=8192, vcpus=4, deleted=0,
                    sampled_at=now + datetime.timedelta(minutes=minutes)))
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/host2')
        self.assertEqual(200, status)
        self.assertEqual(42.5, body['host']['cpu_used_percent'])
        self.assertEqual(1005, body['host']['memory_used'])
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer')
        by_name = {host['host']: host for host in body['hosts']}
        self.assertEqual(42.5, by_name['host2']['cpu_used_percent'])
        self.assertIsNone(by_name['host1']['cpu_used_percent'])

    def test_project_id_in_url_is_accepted(self):
        path = '/%s/loadbalancer/host1' % self.admin_api.project_id
        status, body = self.call(self.admin_api, 'GET', path)
        self.assertEqual(200, status, body)
        self.assertEqual('host1', body['host']['host'])

    def test_unknown_host_is_404(self):
        name = self.assertFault(404, self.call(self.admin_api, 'GET', '/loadbalancer/nope'),
                                'nope')
        self.assertEqual('itemNotFound', name)

    def test_other_nova_routes_still_work(self):
        status, body = self.call(self.admin_api, 'GET', '/os-services')
        self.assertEqual(200, status)
        self.assertTrue(body['services'])

    def test_wrong_method_is_405(self):
        self.assertFault(405, self.call(self.admin_api, 'PUT', '/loadbalancer', body={}))


class TestSuspendUnsuspend(api_base.DrsApiTestCase):

    def suspend(self, host, api=None):
        return self.call(api or self.admin_api, 'POST', '/loadbalancer/action',
                         {'suspend_host': {'host': host}})

    def unsuspend(self, host, api=None):
        return self.call(api or self.admin_api, 'POST', '/loadbalancer/action',
                         {'unsuspend_host': {'host': host}})

    def state(self, host):
        return self.call(self.admin_api, 'GET', '/loadbalancer/%s' % host)[1]['host']

    def test_suspend_is_accepted_and_visible(self):
        status, body = self.suspend('host3')
        self.assertEqual(202, status, body)
        self.assertEqual('suspending', body['host']['suspend_state'])
        host = self.state('host3')
        self.assertEqual('suspending', host['suspend_state'])
        self.assertEqual('suspend requested by admin', host['state_reason'])
        self.assertIsNotNone(host['state_changed_at'])
        self.assertEqual('suspending', db_hosts.get(self.drs_db, 'host3')['suspend_state'])
        # The API only records intent: nothing was migrated or powered off.
        services = self.admin_api.get_services(host='host3', binary='nova-compute')
        self.assertEqual('up', services[0]['state'])

    def test_suspend_twice_is_409(self):
        self.assertEqual(202, self.suspend('host1')[0])
        self.assertFault(409, self.suspend('host1'), 'suspending')

    def test_suspend_of_suspended_host_is_409(self):
        self.assertEqual(202, self.suspend('host1')[0])
        db_hosts.transition(self.drs_db, 'host1', 'suspending', 'suspended', 'daemon')
        self.assertFault(409, self.suspend('host1'), 'suspended')

    def test_unsuspend_cancels_a_pending_suspend(self):
        self.assertEqual(202, self.suspend('host2')[0])
        status, body = self.unsuspend('host2')
        self.assertEqual(202, status, body)
        self.assertEqual('active', self.state('host2')['suspend_state'])
        self.assertEqual('suspend cancelled by admin', self.state('host2')['state_reason'])

    def test_unsuspend_wakes_a_suspended_host(self):
        self.assertEqual(202, self.suspend('host2')[0])
        db_hosts.transition(self.drs_db, 'host2', 'suspending', 'suspended', 'daemon')
        self.assertEqual(202, self.unsuspend('host2')[0])
        self.assertEqual('waking', self.state('host2')['suspend_state'])

    def test_unsuspend_of_active_host_is_409(self):
        self.assertFault(409, self.unsuspend('host1'), 'active')

    def test_unknown_host_is_404_for_every_action(self):
        for action in ({'suspend_host': {'host': 'compute99'}},
                       {'unsuspend_host': {'host': 'compute99'}},
                       {'wake_test': {'host': 'compute99'}},
                       {'set_power': {'host': 'compute99', 'driver': 'noop'}}):
            with self.subTest(action=action):
                self.assertFault(404, self.call(self.admin_api, 'POST', '/loadbalancer/action',
                                                action), "compute host 'compute99' not found")
        self.assertIsNone(db_hosts.get(self.drs_db, 'compute99'))

    def test_bad_bodies_are_400_with_a_message(self):
        cases = {
            'malformed JSON': '{"suspend_host": {"host": ',
            'not an object': '[1, 2]',
            'empty object': '{}',
            'unknown action': '{"reboot_host": {"host": "host1"}}',
            'two actions': '{"suspend_host": {"host": "host1"}, '
                           '"unsuspend_host": {"host": "host1"}}',
            'missing host': '{"suspend_host": {}}',
            'empty host': '{"suspend_host": {"host": ""}}',
            'overlong host': json.dumps({'suspend_host': {'host': 'h' * 256}}),
            'host not a string': '{"suspend_host": {"host": 7}}',
            'extra key': '{"suspend_host": {"host": "host1", "now": true}}',
            'force not a boolean': '{"suspend_host": {"host": "host1", "force": "yes"}}',
            'arguments not an object': '{"suspend_host": "host1"}',
        }
        for case, raw in cases.items():
            with self.subTest(case=case):
                name = self.assertFault(400, self.call(self.admin_api, 'POST',
                                                       '/loadbalancer/action', raw=raw))
                self.assertEqual('badRequest', name)
        self.assertEqual('active', self.state('host1')['suspend_state'])

    def test_messages_name_the_problem(self):
        self.assertFault(400, self.call(self.admin_api, 'POST', '/loadbalancer/action',
                                        raw='{"reboot_host": {}}'), "unknown action 'reboot_host'")
        self.assertFault(400, self.call(self.admin_api, 'POST', '/loadbalancer/action',
                                        raw='{"a": 1, "b": 2}'), 'exactly one action')
        self.assertFault(400, self.call(self.admin_api, 'POST', '/loadbalancer/action',
                                        raw='{"x'), 'malformed request body')
        self.assertFault(400, self.suspend('h' * 256), 'too long')


class TestWakeTestAndPower(api_base.DrsApiTestCase):

    def action(self, body, api=None):
        return self.call(api or self.admin_api, 'POST', '/loadbalancer/action', body)

    def test_wake_test_is_recorded_for_the_daemon(self):
        status, body = self.action({'wake_test': {'host': 'host1'}})
        self.assertEqual(202, status, body)
        request = body['request']
        self.assertEqual(('host1', 'wake_test', 'pending', 'admin'),
                         (request['host'], request['action'], request['status'],
                          request['requested_by']))
        with self.drs_db.reader() as session:
            rows = session.query(models.LbRequest).all()
            self.assertEqual([(request['id'], 'host1', 'pending')],
                             [(row.id, row.host, row.status) for row in rows])
        self.assertFault(409, self.action({'wake_test': {'host': 'host1'}}), 'already pending')

    def test_set_power_stores_secrets_but_never_returns_them(self):
        body = {'set_power': {'host': 'host2', 'driver': 'ipmi', 'mode': 'off',
                              'mac_to_wake': '52:54:00:12:34:56',
                              'options': {'address': '10.0.0.2', 'username': 'root',
                                          'password': 's3cr3t'}}}
        status, result = self.action(body)
        self.assertEqual(200, status, result)
        self.assertEqual(('ipmi', 'off', '52:54:00:12:34:56'),
                         (result['host']['power_driver'], result['host']['power_mode'],
                          result['host']['mac_to_wake']))
        listing = self.call(self.admin_api, 'GET', '/loadbalancer')
        shown = self.call(self.admin_api, 'GET', '/loadbalancer/host2')
        for text in (json.dumps(result), json.dumps(listing), json.dumps(shown)):
            self.assertNotIn('s3cr3t', text)
        with self.drs_db.reader() as session:
            row = session.query(models.DrsHost).filter_by(host='host2').one()
            stored = row.power_options
        # Stored sealed: what every API and scheduler node can read holds no secret ...
        self.assertNotIn('s3cr3t', stored)
        self.assertTrue(sealing.is_sealed(json.loads(stored)['password']))
        self.assertEqual('10.0.0.2', json.loads(stored)['address'])
        # ... a configuration with only the public key opens nothing ...
        record = db_hosts.list_with_power(self.drs_db)
        record = next(r for r in record if r['host'] == 'host2')
        api_only = cfg.ConfigOpts()
        api_only.register_opts(power_conf.power_opts, group='drs_power')
        api_only.set_override('seal_public_key_file', drs_conf.CONF.drs_power.seal_public_key_file,
                              group='drs_power')
        with self.assertRaisesRegex(exception.PowerError, 'sealed for key %s, which is not '
                                    'among' % self.seal_key_id):
            daemon_power.drivers_for(api_only, self.drs_db)(record)
        # ... and the daemon's power driver gets the clear password.
        driver, target = daemon_power.drivers_for(drs_conf.CONF, self.drs_db)(record)
        self.assertEqual('ipmi', driver.NAME)
        self.assertEqual({'address': '10.0.0.2', 'username': 'root', 'password': 's3cr3t'},
                         target.options)

    def test_set_power_secret_without_public_key_is_refused(self):
        self.flags(seal_public_key_file=None, group='drs_power')
        body = {'set_power': {'host': 'host2', 'driver': 'redfish',
                              'options': {'url': 'https://bmc', 'password': 's3cr3t'}}}
        self.assertFault(400, self.action(body), "power option 'password' is secret and no "
                         "[drs_power] seal_public_key_file is set")
        self.assertIsNone(db_hosts.get(self.drs_db, 'host2')['power_driver'])

    def test_set_power_mode_defaults_to_the_drivers_first(self):
        body = {'set_power': {'host': 'host1', 'driver': 'wol',
                              'options': {'broadcast': '192.0.2.255'}}}
        status, result = self.action(body)
        self.assertEqual(200, status, result)
        self.assertEqual(('wol', 's3'), (result['host']['power_driver'],
                                         result['host']['power_mode']))

    def test_set_power_types_string_options_by_the_drivers_schema(self):
        for port in ('623', 623, ' 624 '):
            with self.subTest(port=port):
                body = {'set_power': {'host': 'host1', 'driver': 'wol', 'options': {
                    'broadcast': '192.0.2.255', 'port': port}}}
                status, result = self.action(body)
                self.assertEqual(200, status, result)
                stored = db_hosts.power_settings(self.drs_db, 'host1')[2]
                self.assertEqual(int(port), stored['port'])
        for port, fragment in (('nine', "option 'port' must be of type integer"),
                               ('70000', "option 'port' must be <= 65535"),
                               ('6.5', "option 'port' must be of type integer")):
            with self.subTest(port=port):
                self.assertFault(400, self.action({'set_power': {
                    'host': 'host1', 'driver': 'wol',
                    'options': {'broadcast': '192.0.2.255', 'port': port}}}), fragment)

    def test_set_power_validation(self):
        cases = (
            ({'set_power': {'host': 'host2'}}, 'driver'),
            ({'set_power': {'host': 'host2', 'driver': 'ipmi', 'mode': 's5'}}, 's5'),
            ({'set_power': {'host': 'host2', 'driver': 'ipmi', 'mac_to_wake': 'zz'}}, 'zz'),
            ({'set_power': {'host': 'host2', 'driver': 'a b'}}, 'a b'),
            ({'set_power': {'host': 'host2', 'driver': 'nosuch'}},
             "unknown power driver 'nosuch'"),
            ({'set_power': {'host': 'host2', 'driver': 'ipmi', 'mode': 's3',
                            'options': {'address': 'a', 'username': 'u', 'password': 'p'}}},
             'cannot suspend in mode'),
            ({'set_power': {'host': 'host2', 'driver': 'ipmi', 'options': {'address': 'a'}}},
             'username'),
        )
        for body, fragment in cases:
            with self.subTest(body=body):
                self.assertFault(400, self.action(body), fragment)


class TestDatabaseUnavailable(api_base.DrsApiTestCase):

    def test_unmigrated_database_is_503_with_a_message(self):
        # The filter opens the DRS database on its first request: point it at
        # an empty one, as an operator who forgot "nova-drs-manage db sync".
        self.flags(state_path=self.state_dir + '/empty', group='drs')
        name = self.assertFault(503, self.call(self.admin_api, 'GET', '/loadbalancer'),
                                'nova-drs-manage db sync')
        self.assertEqual('serviceUnavailable', name)
        self.assertFault(503, self.call(self.admin_api, 'POST', '/loadbalancer/action',
                                        {'suspend_host': {'host': 'host1'}}))


class TestSeedPaths(api_base.DrsApiTestCase):
    """The 2015 spec's exact calls: /v2/{project_id}/loadbalancer[/action]."""

    def seed_call(self, method, path, body=None):
        project = self.admin_api.project_id
        url = self.admin_api.base_url.replace('/v2.1', '/v2/%s' % project) + path
        response = self.admin_api.request(
            url, method=method, body=json.dumps(body) if body is not None else None,
            headers={'X-Auth-User': 'admin', 'X-Auth-Project-Id': project,
                     'X-Roles': 'reader,member,admin'})
        return response.status_code, response.json()

    def test_suspend_and_list_through_the_legacy_v2_pipeline(self):
        status, body = self.seed_call('POST', '/loadbalancer/action',
                                      {'suspend_host': {'host': 'host3'}})
        self.assertEqual(202, status, body)
        status, body = self.seed_call('GET', '/loadbalancer')
        self.assertEqual(200, status, body)
        self.assertEqual('suspending', {host['host']: host['suspend_state']
                                        for host in body['hosts']}['host3'])
