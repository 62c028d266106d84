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

"""The real ``nova`` shell (python-novaclient + our extension) against the in-process API.

nova's API fixture stubs keystonemiddleware and builds the request context
from X-Auth-User/X-Roles headers. Clients send only X-Auth-Token, so a
second wsgi-intercept host stands in for keystone: it maps two test tokens
to an admin and a member identity and hands the request to the same nova-api
pipeline (loaded from etc/nova-drs/api-paste.ini).
"""

import contextlib
import io
import json
import tempfile
import threading
import time

import fixtures
from novaclient import shell as nova_shell
from wsgi_intercept import interceptor

from nova_drs.db import hosts as db_hosts
from nova_drs.db import models
from nova_drs.db import plans as db_plans
from nova_drs.loadbalancer import model
from tests.functional import api_base

#: A plan action both CLIs' plan tests store.
SUSPEND_HOST3 = db_plans.Action(model.Suspend('host3', 'cluster idle'), 'c1', 'manual')

CLI_HOST = 'drs-cli-api.test'
ENDPOINT = 'http://%s/v2.1' % CLI_HOST
IDENTITIES = {
    'admin-token': ('admin', 'reader,member,admin'),
    'member-token': ('fake', 'reader,member'),
}


class TokenIdentity:
    """WSGI wrapper: X-Auth-Token -> the identity headers nova's fixture reads."""

    def __init__(self, application, project_id):
        self.application = application
        self.project_id = project_id

    def __call__(self, environ, start_response):
        user, roles = IDENTITIES.get(environ.get('HTTP_X_AUTH_TOKEN'), ('nobody', ''))
        environ.update(HTTP_X_AUTH_USER=user, HTTP_X_USER_ID=user, HTTP_X_ROLES=roles,
                       HTTP_X_AUTH_PROJECT_ID=self.project_id)
        return self.application(environ, start_response)


class CliMixin:
    """Both clients on the test's nova-api, whichever base brings it up."""

    def play_daemon_suspend(self, host):
        """The daemon's part of a suspend, in a thread: once the API recorded
        ``suspending`` (and the CLI had time to see it), -> ``suspended``.
        Waiting for the state, not a fixed delay, holds on a loaded machine."""
        def daemon(stop):
            deadline = time.monotonic() + 30
            while not stop.is_set() and time.monotonic() < deadline:
                if db_hosts.get(self.drs_db, host)['suspend_state'] == 'suspending':
                    time.sleep(1)
                    db_hosts.transition(self.drs_db, host, 'suspending', 'suspended', 'test')
                    return
                time.sleep(0.05)

        db_hosts.ensure(self.drs_db, host)
        self.in_background(daemon)

    def in_background(self, play):
        """Runs ``play(stop)`` in a thread until the test ends: then ``stop``, an
        Event, is set and the thread joined."""
        stop = threading.Event()
        thread = threading.Thread(target=play, args=(stop,))
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(stop.set)

    def setUp(self):
        super().setUp()
        # stevedore caches entry points per sys.path in ~/.cache, keyed by
        # mtimes packed as 32-bit floats (2-minute resolution): right after a
        # "pip install -e ." it can serve the previous entry points. Discover
        # the clients' extensions from the installed metadata instead.
        self.useFixture(fixtures.MonkeyPatch('stevedore._cache._c._dir', tempfile.mkdtemp()))
        self.useFixture(fixtures.MonkeyPatch('stevedore._cache._c._internal', {}))
        self.useFixture(fixtures.EnvironmentVariable('OS_PROJECT_ID',
                                                     self.api_fixture.project_id))
        self.useFixture(fixtures.EnvironmentVariable('OS_AUTH_URL', 'http://keystone.invalid/v3'))
        app = TokenIdentity(self.api_fixture.app(), self.api_fixture.project_id)
        intercept = interceptor.RequestsInterceptor(lambda: app, url='http://%s/' % CLI_HOST)
        intercept.install_intercept()
        self.addCleanup(intercept.uninstall_intercept)

    def auth_args(self, token='admin-token'):
        # keystoneauth's admin_token plugin: a fixed token and endpoint, no
        # keystone round trip (it has no project or auth URL options, which
        # novaclient insists on: they come from OS_PROJECT_ID/OS_AUTH_URL).
        return ['--os-auth-type', 'admin_token', '--os-token', token, '--os-endpoint', ENDPOINT]


class CliTestCase(CliMixin, api_base.DrsApiTestCase):
    """The clients' commands need no server: nova-api alone serves them."""


class TestNovaShell(CliTestCase):

    def nova(self, *argv, token='admin-token'):
        """(exit code, stdout, stderr) of ``nova <argv>`` run through its entry point."""
        out, err = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                nova_shell.main(self.auth_args(token) + list(argv))
            except SystemExit as exc:
                code = exc.code
        return code, out.getvalue(), err.getvalue()

    def test_help_lists_the_lb_commands(self):
        code, out, _ = self.nova('help')
        self.assertEqual(0, code)
        for command in ('lb-host-list', 'lb-host-show', 'lb-suspend', 'lb-unsuspend',
                        'lb-wake-test', 'lb-rule-list', 'lb-rule-add', 'lb-rule-delete',
                        'lb-plan-show', 'lb-plan-list'):
            self.assertIn(command, out)

    def test_host_list_table(self):
        code, out, err = self.nova('lb-host-list')
        self.assertEqual(0, code, err)
        lines = out.splitlines()
        self.assertIn('| Host ', lines[1])
        self.assertIn('| State ', lines[1])
        for host in self.COMPUTE_HOSTS:
            self.assertRegex(out, r'\| %s +\| active +\|' % host)
        self.assertNotIn('Hypervisor Hostname', out)
        code, out, err = self.nova('lb-host-list', '--detail')
        self.assertEqual(0, code, err)
        self.assertIn('Hypervisor Hostname', out)

    def test_suspend_show_and_conflict(self):
        code, out, err = self.nova('lb-suspend', 'host3')
        self.assertEqual(0, code, err)
        self.assertIn('Suspend of host3 accepted (state: suspending); follow with: '
                      'nova lb-host-show host3', out)
        code, out, err = self.nova('lb-host-show', 'host3')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'\| suspend_state +\| suspending')
        self.assertRegex(out, r'\| state_reason +\| suspend requested by admin')
        code, out, err = self.nova('lb-suspend', 'host3')
        self.assertEqual(1, code)
        self.assertIn('host host3 is suspending; only an active host can be suspended', err)
        self.assertIn('HTTP 409', err)
        self.assertNotIn('Traceback', err)

    def test_suspend_wait_follows_the_daemon(self):
        self.play_daemon_suspend('host2')
        code, out, err = self.nova('lb-suspend', 'host2', '--wait', '--poll-interval', '0.1',
                                   '--timeout', '30')
        self.assertEqual(0, code, err)
        self.assertIn('host2: suspending', out)
        self.assertIn('host2: suspended', out)

    def test_wait_times_out_with_non_zero_exit(self):
        code, out, err = self.nova('lb-suspend', 'host1', '--wait', '--poll-interval', '0.1',
                                   '--timeout', '0.3')
        self.assertEqual(1, code)
        self.assertIn('timed out', err)

    def test_unsuspend_and_wake_test(self):
        self.assertEqual(0, self.nova('lb-suspend', 'host1')[0])
        code, out, err = self.nova('lb-unsuspend', 'host1')
        self.assertEqual(0, code, err)
        self.assertIn('Unsuspend of host1 accepted (state: active)', out)
        code, out, err = self.nova('lb-wake-test', 'host1')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'Wake test of host1 requested \(request \d+, pending\)')

    def test_set_power_with_a_port_and_a_prompted_password(self):
        self.useFixture(fixtures.MonkeyPatch('getpass.getpass', lambda prompt: 'hunter2'))
        code, out, err = self.nova(
            'lb-host-set-power', 'host2', '--driver', 'ipmi', '--mode', 'off',
            '--option', 'address=192.0.2.3', '--option', 'port=623',
            '--option', 'username=admin', '--option-prompt', 'password')
        self.assertEqual(0, code, err)
        self.assertIn('power settings of host2 set (driver ipmi, mode off)', out)
        stored = db_hosts.power_settings(self.drs_db, 'host2')[2]
        self.assertEqual(623, stored['port'])
        self.assertNotIn('hunter2', json.dumps(stored))

    def test_host_show_has_allocation_capacity_and_ratio(self):
        code, out, err = self.nova('lb-host-show', 'host1')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'VCPU: 0 of \d+ \(ratio [\d.]+, 0.0 %\)')

    def test_rules(self):
        code, out, err = self.nova('lb-rule-add', 'host', 'compute[0-9]+', 'deny')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'\| 1 +\| host +\| compute\[0-9\]\+ +\| False')
        code, out, err = self.nova('lb-rule-list')
        self.assertRegex(out, r'\| 1 +\| host +\| compute\[0-9\]\+ +\| False')
        code, out, err = self.nova('lb-rule-add', 'host', 'compute[', 'allow')
        self.assertEqual(1, code)
        self.assertIn('invalid regular expression', err)
        code, out, err = self.nova('lb-rule-add', 'host', 'x', 'maybe')
        self.assertEqual(1, code)
        self.assertIn('<allow> must be one of', err)
        self.assertEqual(0, self.nova('lb-rule-delete', '1')[0])
        code, out, err = self.nova('lb-rule-delete', '1')
        self.assertEqual(1, code)
        self.assertIn('rule 1 not found', err)

    def test_plan_show_without_plan(self):
        code, out, err = self.nova('lb-plan-show')
        self.assertEqual(0, code, err)
        self.assertIn('No plan yet', out)

    def test_unknown_host_and_non_admin_are_readable_errors(self):
        code, out, err = self.nova('lb-host-show', 'nowhere')
        self.assertEqual(1, code)
        self.assertIn("compute host 'nowhere' not found in nova (HTTP 404)", err)
        code, out, err = self.nova('lb-host-list', token='member-token')
        self.assertEqual(1, code)
        self.assertIn('policy does not allow nova_drs:loadbalancer:host:list (HTTP 403)', err)

    def test_plan_show_with_actions_and_reasons(self):
        with self.drs_db.writer() as session:
            session.add(models.LbPlan(
                mode='manual', status='pending',
                actions='[{"type": "suspend", "host": "host3", "reason": "cluster idle"}]',
                reasons='["cluster idle"]'))
        code, out, err = self.nova('lb-plan-show')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'\| status +\| pending')
        self.assertIn('{"host": "host3", "reason": "cluster idle", "type": "suspend"}', out)
        self.assertRegex(out, r'\| 1 +\| cluster idle +\|')

    def test_plan_list_and_plan_show_by_id_with_each_actions_progress(self):
        plan_id = db_plans.save(self.drs_db, 'manual', [SUSPEND_HOST3],
                                'pending', cluster='c1')
        code, out, err = self.nova('lb-plan-list')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'\| %d +\| c1 +\| manual +\| pending +\| 0:00:0[0-9] +\| 1 +'
                              r'\| pending 1 +\|' % plan_id)
        code, out, err = self.nova('lb-plan-show', str(plan_id))
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'\| progress +\| pending 1')
        self.assertRegex(out, r'\| 1 +\| pending +\| \{"automation"')

    def test_clear_wake_failed(self):
        db_hosts.ensure(self.drs_db, 'host2')
        db_hosts.set_fields(self.drs_db, 'host2', wake_failed=True)
        code, out, err = self.nova('lb-host-clear-wake-failed', 'host2')
        self.assertEqual(0, code, err)
        self.assertIn('wake_failed of host2 cleared (state: active)', out)
        self.assertFalse(db_hosts.get(self.drs_db, 'host2')['wake_failed'])
        code, out, err = self.nova('lb-host-list', '--detail')
        self.assertIn('Wake Failed', out)

    def test_maintenance_enter_and_exit(self):
        code, out, err = self.nova('lb-maintenance-enter', 'host1')
        self.assertEqual(0, code, err)
        self.assertIn('Maintenance of host1 accepted (state: entering_maintenance)', out)
        code, out, err = self.nova('lb-maintenance-enter', 'host1')
        self.assertEqual(1, code)
        self.assertIn('only an active host can enter maintenance (HTTP 409)', err)
        db_hosts.transition(self.drs_db, 'host1', 'entering_maintenance', 'maintenance',
                            'daemon: empty')
        code, out, err = self.nova('lb-host-list')
        self.assertRegex(out, r'\| host1 +\| maintenance +\|')
        code, out, err = self.nova('lb-maintenance-exit', 'host1')
        self.assertEqual(0, code, err)
        self.assertIn('Exit from maintenance of host1 accepted (state: active)', out)
        self.assertEqual('active', db_hosts.get(self.drs_db, 'host1')['suspend_state'])

    def test_member_gets_a_readable_403(self):
        code, out, err = self.nova('lb-maintenance-enter', 'host1', token='member-token')
        self.assertEqual(1, code)
        self.assertIn('HTTP 403', err)
        self.assertNotIn('Traceback', err)
