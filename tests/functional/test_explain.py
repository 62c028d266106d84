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

"""drs explain on real nova: the daemon stores why, the API and both CLIs tell it."""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs.db import decisions
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.db import models
from tests.functional import api_base
from tests.functional import daemon_support
from tests.functional import test_cli_nova
from tests.functional import test_cli_openstack
from tests.functional import test_daemon_cycle


class TestDaemonExplains(test_daemon_cycle.DaemonTestBase, api_base.ServersApiTestCase):

    def explain(self, kind, subject, cycles=10):
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/explain/%ss/%s?cycles=%d'
                                 % (kind, subject, cycles))
        self.assertEqual(200, status, body)
        return body['decisions']

    def test_suspended_host_names_underload_and_the_threshold(self):
        server, _others = self.quiet_host1()
        self.cycle()
        self.assertIn(self.state('host1'), ('suspending', 'suspended'))
        host1 = self.explain('host', 'host1')
        self.assertEqual('suspend', host1[0]['verdict'], host1)
        self.assertRegex(host1[0]['reason'], r'underload: predicted \d+% < underload 80%')
        kept = self.explain('host', 'host2')[0]
        self.assertEqual('kept', kept['verdict'])
        moved = self.explain('server', server['id'])[0]
        self.assertEqual('moved', moved['verdict'])
        self.assertRegex(moved['reason'], r'underload: host1 emptied to be suspended; '
                                          r'to host[23]: fullest host')
        self.assertIn("evacuated by the host lifecycle: nova's scheduler places it",
                      moved['reason'])

    def test_host_kept_on_by_a_deny_rule_names_the_rule(self):
        self.quiet_host1()
        with self.drs_db.writer() as session:
            rule = models.LbRule(type='host', value='host1', allow=False)
            session.add(rule)
            session.flush()
            rule_id = rule.id
        self.cycle()
        self.assertEqual('active', self.state('host1'))
        host1 = self.explain('host', 'host1')[0]
        self.assertEqual(('kept', 'rule'), (host1['verdict'], host1['refusal']), host1)
        self.assertIn('denied by rule %d (host host1)' % rule_id, host1['reason'])

    def test_server_in_cooldown_says_so(self):
        self.flags(group='drs_oscillation', oscillation_window=0)   # cooldown alone
        big = self.admin_api.post_flavor(
            {'flavor': {'name': 'big', 'vcpus': 4, 'ram': 512, 'disk': 1}})
        busy = [self._create_server(name='s%d' % i, host='host2', networks='none',
                                    flavor_id=big['id']) for i in range(3)]
        quiet = self._create_server(name='q', host='host3', networks='none')
        load = {s['id']: ('host2', 100.0) for s in busy}
        load[quiet['id']] = ('host3', 10.0)
        daemon_support.record_load(self.drs_db, {'host1': 1.0, 'host2': 80.0, 'host3': 5.0},
                                   load)
        # Moves of theirs requested while the cycle plans (after it observed):
        # the plan did not weigh them, so the orchestrator holds its move back.
        later = timeutils.utcnow() + datetime.timedelta(seconds=5)
        for server in busy:
            request = lb_migrations.request(self.drs_db, server['id'], 'host1', 'host2',
                                            'live', 'test')
            with self.drs_db.writer() as session:
                session.execute(sa.update(models.LbMigration)
                                .where(models.LbMigration.id == request)
                                .values(created_at=later))
        summary = self.cycle()
        planned = [a.instance for a in summary['actions'] if a.kind == 'migrate'
                   and a.source == 'host2']
        self.assertTrue(planned, summary)
        self.assertEqual(['host2'] * 3, [self.server_host(s['id']) for s in busy])
        held = self.explain('server', planned[0])[0]
        self.assertEqual(('not moved', 'cooldown'), (held['verdict'], held['refusal']), held)
        self.assertIn('cooldown', held['reason'])
        self.assertIn('planned host2 -> ', held['reason'])

    def test_one_insert_and_one_bounded_prune_per_cycle(self):
        self.quiet_host1()
        statements = []

        def listen(conn, cursor, statement, parameters, context, executemany):
            if 'lb_decisions' in statement:
                statements.append((statement.split(None, 1)[0].upper(), executemany))

        sa.event.listen(self.drs_db.engine, 'before_cursor_execute', listen)
        try:
            self.balancer.run_cycle()
        finally:
            sa.event.remove(self.drs_db.engine, 'before_cursor_execute', listen)
        # One INSERT of the cycle's rows. The per-cycle prune (and the first
        # cycle's history purge) select the ids of at most one batch of old
        # rows each and delete only when there are any: nothing is old yet.
        self.assertEqual([('INSERT', True)], [s for s in statements if s[0] != 'SELECT'])
        self.assertLessEqual(len(statements), 3)
        self.assertEqual(3, len(self.explain('host', 'host1')) + len(
            self.explain('host', 'host2')) + len(self.explain('host', 'host3')))

    def test_retention_prunes_old_decisions(self):
        old = timeutils.utcnow() - datetime.timedelta(hours=25)
        decisions.save(self.drs_db, [decisions.row(old, 'host', 'host1', 'kept', 'old')])
        self.assertEqual(1, len(self.explain('host', 'host1')))
        self.cycle()
        reasons = [d['reason'] for d in self.explain('host', 'host1', cycles=100)]
        self.assertNotIn('old', reasons)
        self.assertEqual(1, len(reasons))
        drs_conf.CONF.set_override('decision_retention', 48, group='loadbalancer')
        self.addCleanup(drs_conf.CONF.clear_override, 'decision_retention',
                        group='loadbalancer')
        decisions.save(self.drs_db, [decisions.row(old, 'host', 'host1', 'kept', 'old')])
        self.cycle()
        self.assertIn('old', [d['reason'] for d in self.explain('host', 'host1', cycles=100)])


class TestManualClusterExplains(TestDaemonExplains):
    CLUSTER_METADATA = dict(TestDaemonExplains.CLUSTER_METADATA, drs_automation='manual')

    def test_planned_suspend_waits_for_approval(self):
        self.quiet_host1()
        self.cycle()
        self.assertEqual('active', self.state('host1'))
        host1 = self.explain('host', 'host1')[0]
        self.assertEqual('planned', host1['verdict'])
        self.assertIn('(manual cluster: planned, waiting for approval)', host1['reason'])
        server = self.explain('server', 'a1')[0]
        self.assertEqual('planned', server['verdict'], server)

    def test_approved_plan_is_done_when_it_starts(self):
        self.quiet_host1()
        self.cycle()
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/plan')
        plan_id = body['plan']['id']
        status, body = self.call(self.admin_api, 'POST', '/loadbalancer/plan/action',
                                 {'approve': {'plan_id': plan_id}})
        self.assertEqual(202, status, body)
        self.cycle()
        server = self.explain('server', 'a1')[0]
        self.assertEqual('moved', server['verdict'], server)
        self.assertIn('approved plan %s: started move host1 -> ' % plan_id, server['reason'])

    # The automatic scenarios are TestDaemonExplains'.
    test_suspended_host_names_underload_and_the_threshold = None
    test_host_kept_on_by_a_deny_rule_names_the_rule = None
    test_server_in_cooldown_says_so = None
    test_one_insert_and_one_bounded_prune_per_cycle = None
    test_retention_prunes_old_decisions = None


class TestExplainApi(api_base.DrsApiTestCase):

    def test_cycles_out_of_range_is_400(self):
        for cycles in ('0', '101', 'x', '-1'):
            self.assertFault(400, self.call(self.admin_api, 'GET',
                                            '/loadbalancer/explain/hosts/host1?cycles=' + cycles))

    def test_unknown_host_and_server_are_404(self):
        self.assertFault(404, self.call(self.admin_api, 'GET',
                                        '/loadbalancer/explain/hosts/nope'), 'nope')
        self.assertFault(404, self.call(self.admin_api, 'GET', '/loadbalancer/explain/servers/'
                                        '6f1e8c2a-3d7b-4e5f-9a0b-1c2d3e4f5a6b'))

    def test_suspended_host_says_since_when_and_why(self):
        drs_hosts.ensure(self.drs_db, 'host1')
        drs_hosts.transition(self.drs_db, 'host1', 'active', 'suspending', 'underload')
        drs_hosts.transition(self.drs_db, 'host1', 'suspending', 'suspended', 'powered off')
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/explain/hosts/host1')
        self.assertEqual(200, status, body)
        self.assertEqual(('suspended', 'powered off'),
                         (body['state']['state'], body['state']['reason']))
        self.assertRegex(body['state']['since'], r'^\d{4}-\d\d-\d\dT')
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/explain/hosts/host2')
        self.assertEqual('active', body['state']['state'])

    def test_only_the_last_cycles_are_returned(self):
        now = timeutils.utcnow()
        decisions.save(self.drs_db, [
            decisions.row(now - datetime.timedelta(minutes=m), 'host', 'host1', 'kept',
                          'cycle %d' % m) for m in range(5)])
        status, body = self.call(self.admin_api, 'GET',
                                 '/loadbalancer/explain/hosts/host1?cycles=2')
        self.assertEqual(['cycle 0', 'cycle 1'], [d['reason'] for d in body['decisions']])

    def test_member_is_403(self):
        for api in (self.api_fixture.api, self.api_fixture.reader_api):
            self.assertFault(403, self.call(api, 'GET', '/loadbalancer/explain/hosts/host1'),
                             'nova_drs:loadbalancer:explain')


class TestExplainServersApi(api_base.ServersApiTestCase):
    """Server names and ids are resolved by nova: these need servers it built."""

    def test_server_by_name_and_an_ambiguous_name_is_409(self):
        server = self._create_server(name='calm', networks='none')
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/explain/servers/calm')
        self.assertEqual((200, server['id']), (status, body['server']), body)
        self.assertFault(404, self.call(self.admin_api, 'GET',
                                        '/loadbalancer/explain/servers/cal'), 'cal')
        self._create_server(name='calm', networks='none')
        self.assertFault(409, self.call(self.admin_api, 'GET',
                                        '/loadbalancer/explain/servers/calm'),
                         'more than one server is named calm')

    def test_known_server_without_decisions_is_an_empty_list(self):
        server = self._create_server(name='calm', networks='none')
        status, body = self.call(self.admin_api, 'GET',
                                 '/loadbalancer/explain/servers/%s' % server['id'])
        self.assertEqual((200, []), (status, body['decisions']))


def _store_example(database, server_id):
    now = timeutils.utcnow()
    decisions.save(database, [
        decisions.row(now, 'host', 'host1', 'kept',
                      'underloaded (load 5%, predicted 6%) but kept on: denied by rule 1 '
                      '(host host1)', 'rule'),
        decisions.row(now, 'server', server_id, 'moved',
                      'overload: ...; to host2', refused=(('host3', 'capacity'),))])


class TestExplainNovaShell(test_cli_nova.CliMixin, api_base.ServersApiTestCase):
    nova = test_cli_nova.TestNovaShell.nova

    def test_lb_explain_host_and_server(self):
        server = self._create_server(name='web', networks='none')
        _store_example(self.drs_db, server['id'])
        code, out, err = self.nova('lb-explain', 'host', 'host1')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'\d{4}-\d\d-\d\dT[\d:.]+Z  kept \[rule\]: underloaded .* '
                              r'denied by rule 1')
        code, out, err = self.nova('lb-explain', 'server', 'web', '--cycles', '3')
        self.assertEqual(0, code, err)
        self.assertIn('moved: overload: ...; to host2', out)
        self.assertIn('    refused host3: capacity', out)
        code, out, err = self.nova('lb-explain', 'host', 'host2')
        self.assertEqual((0, 'No decisions about host host2 in the last 10 cycles.\n'),
                         (code, out))
        drs_hosts.ensure(self.drs_db, 'host3')
        drs_hosts.transition(self.drs_db, 'host3', 'active', 'suspending', 'underload')
        drs_hosts.transition(self.drs_db, 'host3', 'suspending', 'suspended', 'powered off')
        code, out, err = self.nova('lb-explain', 'host', 'host3')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'^host3 is suspended since \d{4}-\S+: powered off\n')
        code, out, err = self.nova('lb-explain', 'host', 'host1', '--cycles', '0')
        self.assertEqual(1, code)
        self.assertIn('cycles=0 is not between 1 and 100 (HTTP 400)', err)


class TestExplainOpenStackShell(test_cli_openstack.OpenStackShellMixin, test_cli_nova.CliMixin,
                                api_base.ServersApiTestCase):
    def test_drs_explain_host_and_server(self):
        server = self._create_server(name='web', networks='none')
        _store_example(self.drs_db, server['id'])
        code, out, err = self.openstack('drs', 'explain', 'host', 'host1', '-f', 'value',
                                        '-c', 'Verdict', '-c', 'Refusal')
        self.assertEqual((0, 'kept rule\n'), (code, out), err)
        code, out, err = self.openstack('drs', 'explain', 'server', server['id'])
        self.assertEqual(0, code, err)
        self.assertIn('host3 (capacity)', out)
        self.assertIn('overload: ...; to host2', out)
        code, out, err = self.openstack('drs', 'explain', 'server', 'web', '-f', 'value',
                                        '-c', 'Verdict')
        self.assertEqual((0, 'moved\n'), (code, out), err)
        drs_hosts.ensure(self.drs_db, 'host2')
        drs_hosts.transition(self.drs_db, 'host2', 'active', 'suspending', 'underload')
        drs_hosts.transition(self.drs_db, 'host2', 'suspending', 'suspended', 'powered off')
        code, out, err = self.openstack('drs', 'explain', 'host', 'host2', '-f', 'value',
                                        '-c', 'Verdict', '-c', 'Reason')
        self.assertEqual(0, code, err)
        self.assertRegex(out, r'^now suspended suspended since \d{4}-.*: powered off\n$')
        code, out, err = self.openstack('drs', 'explain', 'host', 'nowhere')
        self.assertEqual(1, code)
        self.assertIn("compute host 'nowhere' not found in nova (HTTP 404)", err)
