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

"""The real ``openstack`` shell (python-openstackclient + our plugin) on the in-process API."""

import contextlib
import io
import json

import fixtures
import yaml

from nova_drs.db import hosts as db_hosts
from nova_drs.db import models
from nova_drs.db import plans as db_plans
from tests.functional import test_cli_nova


def osc_environment(testcase):
    """Takes OS_PROJECT_ID and OS_AUTH_URL out of the environment for the rest of
    ``testcase``: only novaclient needs them (see CliTestCase); OSC would hand
    them to the admin_token plugin, which takes no project or auth URL."""
    for name in ('OS_PROJECT_ID', 'OS_AUTH_URL'):
        testcase.useFixture(fixtures.EnvironmentVariable(name))


class OpenStackShellMixin:
    """``self.openstack(...)``, the openstack CLI in-process, for a test class with
    the nova CLI's fixtures (test_cli_nova.CliMixin), mixed in before it."""

    def setUp(self):
        super().setUp()
        osc_environment(self)

    def openstack(self, *argv, token='admin-token'):
        """(exit code, stdout, stderr) of ``openstack <argv>`` through its entry point."""
        from openstackclient import shell as osc_shell
        from openstackclient.common import clientmanager
        # osc-lib caches each plugin's client (with its token) on the
        # ClientManager class; a real "openstack" runs one command per process.
        for klass in clientmanager.ClientManager.__mro__:
            if 'drs' in vars(klass):
                vars(klass)['drs']._handle = None
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = osc_shell.main(self.osc_auth_args(token) + list(argv))
        return code, out.getvalue(), err.getvalue()

    @staticmethod
    def osc_auth_args(token):
        return ['--os-auth-type', 'admin_token', '--os-token', token,
                '--os-endpoint', test_cli_nova.ENDPOINT]


class TestOpenStackShell(OpenStackShellMixin, test_cli_nova.CliTestCase):

    def test_help_lists_the_drs_commands(self):
        code, out, err = self.openstack('help', 'drs')
        self.assertEqual(0, code, err)
        for command in ('host list', 'host show', 'host suspend', 'host unsuspend',
                        'host set', 'host wake test', 'rule list', 'rule create',
                        'rule delete', 'plan list', 'plan show', 'plan approve', 'plan reject',
                        'policy list'):
            self.assertIn('drs ' + command, out)

    def test_policy_list_shows_every_parameter_with_its_default(self):
        code, out, err = self.openstack('drs', 'policy', 'list', '-f', 'json')
        self.assertEqual(0, code, err)
        rows = {(row['Kind'], row['Name']): row['Parameters'] for row in json.loads(out)}
        self.assertIn('window=12 samples', rows[('policy', 'drs')])
        self.assertIn('cooldown=3600.0 seconds', rows[('policy', 'drs')])
        self.assertIn('threshold=0.8 fraction of capacity', rows[('overload', 'thr')])
        self.assertEqual('', rows[('vm_selection', 'mmt')])
        self.assertIn('quantile=0.8 quantile (0..1),', rows[('policy', 'drs')])
        self.assertTrue(rows[('policy', 'even_distribution')].endswith('max_migrations=none'))
        code, out, err = self.openstack('drs', 'policy', 'list', '--long', '-f', 'json')
        schema = json.loads({(r['Kind'], r['Name']): r['Parameters']
                             for r in json.loads(out)}[('policy', 'drs')])
        self.assertEqual({'type': 'integer', 'minimum': 1, 'maximum': 30, 'default': 12,
                          'unit': 'samples',
                          'description': 'newest CPU samples each server is sized from'},
                         schema['properties']['window'])

    def test_host_list_in_every_format(self):
        code, out, err = self.openstack('drs', 'host', 'list')
        self.assertEqual(0, code, err)
        self.assertIn('| Host  | State  |', out)
        code, out, err = self.openstack('drs', 'host', 'list', '-f', 'json')
        self.assertEqual(0, code, err)
        listing = json.loads(out)
        self.assertEqual(list(self.COMPUTE_HOSTS), [host['Host'] for host in listing])
        self.assertEqual({'active'}, {host['State'] for host in listing})
        code, out, err = self.openstack('drs', 'host', 'list', '--long', '-f', 'yaml')
        self.assertEqual(0, code, err)
        self.assertIn('Hypervisor Hostname', yaml.safe_load(out)[0])
        code, out, err = self.openstack('drs', 'host', 'list', '-f', 'value', '-c', 'Host')
        self.assertEqual('host1\nhost2\nhost3\n', out)

    def test_suspend_show_unsuspend(self):
        code, out, err = self.openstack('drs', 'host', 'suspend', 'host2', '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual('suspending', json.loads(out)['suspend_state'])
        self.assertIn('Suspend of host2 accepted', err)
        code, out, err = self.openstack('drs', 'host', 'show', 'host2', '-f', 'value',
                                        '-c', 'suspend_state')
        self.assertEqual('suspending\n', out)
        code, out, err = self.openstack('drs', 'host', 'suspend', 'host2')
        self.assertEqual(1, code)
        self.assertIn('host host2 is suspending; only an active host can be suspended '
                      '(HTTP 409)', err)
        code, out, err = self.openstack('drs', 'host', 'unsuspend', 'host2', '-f', 'value',
                                        '-c', 'suspend_state')
        self.assertEqual((0, 'active\n'), (code, out), err)

    def test_suspend_wait(self):
        self.play_daemon_suspend('host1')
        code, out, err = self.openstack('drs', 'host', 'suspend', 'host1', '--wait',
                                        '--poll-interval', '0.1', '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual('suspended', json.loads(out)['suspend_state'])
        self.assertIn('host1: suspending', err)

    def set_ipmi_power_off(self, *options):
        """``openstack drs host set host3`` to the ipmi driver, power mode off, and
        ``options``; the host it prints, which must not show the password."""
        code, out, err = self.openstack(
            'drs', 'host', 'set', 'host3', '--power-driver', 'ipmi', '--power-mode', 'off',
            *options, '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertNotIn('hunter2', out)
        return json.loads(out)

    def test_set_power_and_wake_test(self):
        host = self.set_ipmi_power_off(
            '--mac-to-wake', '52:54:00:aa:bb:cc', '--power-option', 'address=192.0.2.3',
            '--power-option', 'username=admin', '--power-option', 'password=hunter2')
        self.assertEqual(('ipmi', 'off'), (host['power_driver'], host['power_mode']))
        code, out, err = self.openstack('drs', 'host', 'wake', 'test', 'host3', '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual(('host3', 'pending'),
                         (json.loads(out)['host'], json.loads(out)['status']))

    def test_set_power_with_a_port_and_a_prompted_password(self):
        # Every --power-option is a string: the API types port by the schema.
        self.useFixture(fixtures.MonkeyPatch('getpass.getpass', lambda prompt: 'hunter2'))
        self.set_ipmi_power_off(
            '--power-option', 'address=192.0.2.3', '--power-option', 'port=623',
            '--power-option', 'username=admin', '--power-option-prompt', 'password')
        stored = db_hosts.power_settings(self.drs_db, 'host3')[2]
        self.assertEqual(623, stored['port'])
        self.assertIn('password', stored)
        code, _out, err = self.openstack(
            'drs', 'host', 'set', 'host3', '--power-driver', 'ipmi',
            '--power-option', 'address=192.0.2.3', '--power-option', 'port=ipmi',
            '--power-option', 'username=admin', '--power-option', 'password=x')
        self.assertNotEqual(0, code)
        self.assertIn("option 'port' must be of type integer", err)

    def test_host_show_has_allocation_capacity_and_ratio_per_resource_class(self):
        code, out, err = self.openstack('drs', 'host', 'show', 'host1', '-f', 'json')
        self.assertEqual(0, code, err)
        lines = json.loads(out)['allocation'].splitlines()
        self.assertEqual(['VCPU', 'MEMORY_MB', 'DISK_GB'],
                         [line.split(':')[0] for line in lines])
        self.assertRegex(lines[0], r'^VCPU: 0 of \d+ \(ratio [\d.]+, 0.0 %\)$')

    def test_rules(self):
        code, out, err = self.openstack('drs', 'rule', 'create', '--type', 'aggregate',
                                        '--deny', 'gpu-.*', '-f', 'json')
        self.assertEqual(0, code, err)
        rule = json.loads(out)
        self.assertEqual(('aggregate', 'gpu-.*', False),
                         (rule['type'], rule['value'], rule['allow']))
        code, out, err = self.openstack('drs', 'rule', 'list', '-f', 'json')
        self.assertEqual([{'ID': rule['id'], 'Type': 'aggregate', 'Value': 'gpu-.*',
                           'Allow': False}], json.loads(out))
        code, out, err = self.openstack('drs', 'rule', 'create', '--type', 'host', '--allow',
                                        '(')
        self.assertEqual(1, code)
        self.assertIn('invalid regular expression', err)
        second = json.loads(self.openstack('drs', 'rule', 'create', '--type', 'host',
                                           '--deny', 'db-.*', '-f', 'json')[1])
        code, out, err = self.openstack('drs', 'rule', 'delete', str(rule['id']),
                                        str(second['id']), '4242')
        self.assertEqual(1, code)
        self.assertIn('failed to delete rule 4242', err)
        self.assertIn('1 of 3 rules failed to delete', err)
        self.assertEqual('[]', self.openstack('drs', 'rule', 'list', '-f', 'json')[1].strip())

    def test_plans_and_policies(self):
        with self.drs_db.writer() as session:
            plan = models.LbPlan(mode='manual', status='pending',
                                 actions='[{"type": "suspend", "host": "host3"}]',
                                 reasons='["cluster under 20% for 30 min"]')
            session.add(plan)
            session.flush()
            plan_id = plan.id
        code, out, err = self.openstack('drs', 'plan', 'show', '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual(['cluster under 20% for 30 min'], json.loads(out)['reasons'])
        code, out, err = self.openstack('drs', 'plan', 'approve', str(plan_id), '-f', 'json')
        self.assertEqual('approved', json.loads(out)['status'], err)
        code, out, err = self.openstack('drs', 'plan', 'reject', str(plan_id))
        self.assertEqual(1, code)
        self.assertIn('HTTP 409', err)
        code, out, err = self.openstack('drs', 'policy', 'list', '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertIsInstance(json.loads(out), list)

    def test_plan_list_shows_status_cluster_age_and_plan_show_by_id_the_progress(self):
        older = db_plans.save(self.drs_db, 'manual', [test_cli_nova.SUSPEND_HOST3], 'pending',
                               cluster='c1')
        newer = db_plans.save(self.drs_db, 'automatic', [test_cli_nova.SUSPEND_HOST3], 'done',
                               cluster='c2')
        code, out, err = self.openstack('drs', 'plan', 'list', '-f', 'json')
        self.assertEqual(0, code, err)
        rows = json.loads(out)
        self.assertEqual([(newer, 'c2', 'done', 1, 'done 1'), (older, 'c1', 'pending', 1,
                                                                 'pending 1')],
                         [(r['ID'], r['Cluster'], r['Status'], r['Actions'], r['Progress'])
                          for r in rows])
        self.assertRegex(rows[0]['Age'], r'^0:00:0[0-9]$')
        code, out, err = self.openstack('drs', 'plan', 'list', '--status', 'pending',
                                        '-f', 'json')
        self.assertEqual([older], [r['ID'] for r in json.loads(out)], err)
        code, out, err = self.openstack('drs', 'plan', 'show', str(older), '-f', 'json')
        self.assertEqual(0, code, err)
        shown = json.loads(out)
        self.assertEqual(('c1', 'pending 1', 'pending'),
                         (shown['cluster'], shown['progress'], shown['actions'][0]['status']))
        self.assertEqual({'type': 'suspend', 'host': 'host3', 'reason': 'cluster idle',
                          'cluster': 'c1', 'automation': 'manual', 'status': 'pending',
                          'detail': None}, shown['actions'][0])
        code, out, err = self.openstack('drs', 'plan', 'show', str(older))
        self.assertEqual(0, code, err)
        # One line per action under its headings, not one repr of the list.
        self.assertRegex(out, r'\| actions +\| # +Type +Instance/Host +Source +Destination '
                              r'+Reason +Status +\|')
        self.assertRegex(out, r'\| +\| 1 +suspend +host3 +cluster idle +pending +\|')
        self.assertNotIn("{'type'", out)
        code, out, err = self.openstack('drs', 'plan', 'list', '--status', 'superseded')
        self.assertEqual(0, code, err)
        code, out, err = self.openstack('drs', 'plan', 'show', '99999')
        self.assertEqual(1, code)
        self.assertIn('plan 99999 not found (HTTP 404)', err)

    def test_non_admin_gets_a_readable_403(self):
        code, out, err = self.openstack('drs', 'host', 'list', token='member-token')
        self.assertEqual(1, code, (out, err))
        self.assertIn('policy does not allow nova_drs:loadbalancer:host:list (HTTP 403)', err)

    def test_help_lists_the_new_commands(self):
        code, out, err = self.openstack('help', 'drs')
        self.assertEqual(0, code, err)
        self.assertIn('drs host maintenance enter', out)
        self.assertIn('drs host maintenance exit', out)

    def test_set_clear_wake_failed(self):
        db_hosts.ensure(self.drs_db, 'host3')
        db_hosts.set_fields(self.drs_db, 'host3', wake_failed=True)
        code, out, err = self.openstack('drs', 'host', 'set', 'host3', '--clear-wake-failed',
                                        '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertFalse(json.loads(out)['wake_failed'])
        self.assertFalse(db_hosts.get(self.drs_db, 'host3')['wake_failed'])

    def test_set_needs_something_to_set(self):
        code, out, err = self.openstack('drs', 'host', 'set', 'host3')
        self.assertEqual(1, code)
        self.assertIn('nothing to set', err)
        code, out, err = self.openstack('drs', 'host', 'set', 'host3', '--power-mode', 's3')
        self.assertEqual(1, code)
        self.assertIn('need --power-driver', err)

    def test_maintenance_enter_show_exit(self):
        code, out, err = self.openstack('drs', 'host', 'maintenance', 'enter', 'host2',
                                        '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual('entering_maintenance', json.loads(out)['suspend_state'])
        code, out, err = self.openstack('drs', 'host', 'list', '-f', 'json')
        self.assertEqual('entering_maintenance',
                         {h['Host']: h['State'] for h in json.loads(out)}['host2'])
        code, out, err = self.openstack('drs', 'host', 'maintenance', 'exit', 'host2',
                                        '-f', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual('active', json.loads(out)['suspend_state'])
        code, out, err = self.openstack('drs', 'host', 'maintenance', 'exit', 'host2')
        self.assertEqual(1, code)
        self.assertIn('HTTP 409', err)
