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

"""Rules, plans and policies routes, and the 403 of every route for non-admins."""

import json
import os

from nova_drs.db import models
from tests.functional import api_base

EVERY_ROUTE = (
    ('GET', '/loadbalancer', None),
    ('GET', '/loadbalancer/host1', None),
    ('GET', '/loadbalancer/nosuchhost', None),
    ('POST', '/loadbalancer/action', {'suspend_host': {'host': 'host1'}}),
    ('POST', '/loadbalancer/action', {'unsuspend_host': {'host': 'host1'}}),
    ('POST', '/loadbalancer/action', {'wake_test': {'host': 'host1'}}),
    ('POST', '/loadbalancer/action', {'set_power': {'host': 'host1', 'driver': 'ipmi'}}),
    ('POST', '/loadbalancer/action', {'bogus': {}}),
    ('POST', '/loadbalancer/action', '{not json'),
    ('GET', '/loadbalancer/rules', None),
    ('POST', '/loadbalancer/rules', {'rule': {'type': 'host', 'value': 'x', 'allow': True}}),
    ('POST', '/loadbalancer/rules', '{not json'),
    ('GET', '/loadbalancer/rules/1', None),
    ('DELETE', '/loadbalancer/rules/1', None),
    ('GET', '/loadbalancer/plan', None),
    ('POST', '/loadbalancer/plan/action', {'approve': {'plan_id': 1}}),
    ('POST', '/loadbalancer/plan/action', {'reject': {'plan_id': 1}}),
    ('POST', '/loadbalancer/plan/action', '{not json'),
    ('GET', '/loadbalancer/policies', None),
)


class TestNonAdminIsForbiddenEverywhere(api_base.DrsApiTestCase):

    def test_every_route_is_403_for_member_reader_and_other(self):
        with self.drs_db.writer() as session:
            session.add(models.LbRule(type='host', value='host1', allow=True))
            session.add(models.LbPlan(mode='manual', status='pending', actions='[]',
                                      reasons='[]'))
        for api in (self.api_fixture.api, self.api_fixture.reader_api, self.api_fixture.other_api):
            for method, path, body in EVERY_ROUTE:
                raw = body if isinstance(body, str) else None
                with self.subTest(user=api.roles, method=method, path=path, body=body):
                    name = self.assertFault(403, self.call(
                        api, method, path, body=None if raw else body, raw=raw))
                    self.assertEqual('forbidden', name)
        # Nothing changed behind the 403s.
        self.assertEqual('active', self.call(self.admin_api, 'GET', '/loadbalancer/host1')
                         [1]['host']['suspend_state'])
        self.assertEqual(1, len(self.call(self.admin_api, 'GET', '/loadbalancer/rules')
                                [1]['rules']))
        self.assertEqual('pending', self.call(self.admin_api, 'GET', '/loadbalancer/plan')
                         [1]['plan']['status'])


class TestRules(api_base.DrsApiTestCase):

    def create(self, rule_type='host', value='compute[0-9]+', allow=False):
        return self.call(self.admin_api, 'POST', '/loadbalancer/rules',
                         {'rule': {'type': rule_type, 'value': value, 'allow': allow}})

    def test_create_list_show_delete(self):
        status, body = self.create()
        self.assertEqual(201, status, body)
        rule = body['rule']
        self.assertEqual(('host', 'compute[0-9]+', False),
                         (rule['type'], rule['value'], rule['allow']))
        status, listing = self.call(self.admin_api, 'GET', '/loadbalancer/rules')
        self.assertEqual([rule['id']], [item['id'] for item in listing['rules']])
        status, shown = self.call(self.admin_api, 'GET', '/loadbalancer/rules/%d' % rule['id'])
        self.assertEqual(rule, shown['rule'])
        self.assertEqual((204, None), self.call(self.admin_api, 'DELETE',
                                                '/loadbalancer/rules/%d' % rule['id']))
        self.assertEqual([], self.call(self.admin_api, 'GET', '/loadbalancer/rules')[1]['rules'])
        self.assertFault(404, self.call(self.admin_api, 'DELETE',
                                        '/loadbalancer/rules/%d' % rule['id']))

    def test_every_rule_type_is_accepted(self):
        for rule_type in ('host', 'aggregate', 'availability_zone'):
            self.assertEqual(201, self.create(rule_type, '.*', True)[0])

    def test_invalid_regex_is_400(self):
        self.assertFault(400, self.create(value='compute[0-9'), 'invalid regular expression')
        self.assertEqual([], self.call(self.admin_api, 'GET', '/loadbalancer/rules')[1]['rules'])

    def test_patterns_with_unbounded_matching_time_are_400(self):
        for value, fragment in (('(a+)+$', 'exponential time'),
                                ('(a|aa)*', 'exponential time'),
                                ('(.*)\\1', 'backreference'),
                                ('.*.*.*.*', 'too many ways')):
            with self.subTest(value=value):
                self.assertFault(400, self.create(value=value), fragment)
        self.assertEqual([], self.call(self.admin_api, 'GET', '/loadbalancer/rules')[1]['rules'])
        self.assertEqual(201, self.create(value='rack[0-9]+-node[0-9]+-.*')[0])

    def test_bad_rule_bodies_are_400(self):
        cases = (
            '{"rule": {"type": "rack", "value": "x", "allow": true}}',
            '{"rule": {"type": "host", "value": "", "allow": true}}',
            '{"rule": {"type": "host", "value": "x", "allow": "yes"}}',
            '{"rule": {"type": "host", "value": "x"}}',
            '{"rule": {"type": "host", "value": "x", "allow": true, "id": 4}}',
            json.dumps({'rule': {'type': 'host', 'value': 'x' * 256, 'allow': True}}),
            '{"rules": []}',
            '{"rule": ',
            '"rule"',
        )
        for raw in cases:
            with self.subTest(raw=raw[:60]):
                self.assertFault(400, self.call(self.admin_api, 'POST', '/loadbalancer/rules',
                                                raw=raw))

    def test_unknown_or_malformed_rule_id_is_404(self):
        for rule_id in ('999', 'abc', '-1', '1.5', '99999999999999999999'):
            with self.subTest(rule_id=rule_id):
                self.assertFault(404, self.call(self.admin_api, 'GET',
                                                '/loadbalancer/rules/%s' % rule_id))


class TestPlans(api_base.DrsApiTestCase):

    def add_plan(self, status='pending', cluster=None):
        with self.drs_db.writer() as session:
            plan = models.LbPlan(
                cluster=cluster, mode='manual', status=status,
                actions=json.dumps([{'type': 'migrate', 'instance': 'abc', 'to': 'host2'}]),
                reasons=json.dumps(['host1 cpu 93% > 80% for 3 samples']))
            session.add(plan)
            session.flush()
            return plan.id

    def decide(self, decision, plan_id):
        return self.call(self.admin_api, 'POST', '/loadbalancer/plan/action',
                         {decision: {'plan_id': plan_id}})

    def test_no_plan_yet(self):
        self.assertEqual((200, {'plan': None}),
                         self.call(self.admin_api, 'GET', '/loadbalancer/plan'))

    def test_last_plan_is_shown_with_reasons(self):
        self.add_plan(status='done')
        plan_id = self.add_plan()
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/plan')
        self.assertEqual(200, status)
        self.assertEqual(plan_id, body['plan']['id'])
        self.assertEqual(['host1 cpu 93% > 80% for 3 samples'], body['plan']['reasons'])
        self.assertEqual('migrate', body['plan']['actions'][0]['type'])

    def test_plan_of_a_cluster(self):
        first = self.add_plan(cluster='az1')
        self.add_plan(cluster='az2')
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/plan?cluster=az1')
        self.assertEqual(first, body['plan']['id'])

    def test_approve_and_reject(self):
        approved, rejected = self.add_plan(), self.add_plan()
        status, body = self.decide('approve', approved)
        self.assertEqual(202, status, body)
        self.assertEqual(('approved', 'admin'),
                         (body['plan']['status'], body['plan']['decided_by']))
        self.assertEqual('rejected', self.decide('reject', rejected)[1]['plan']['status'])
        self.assertFault(409, self.decide('reject', approved), 'approved')
        self.assertFault(404, self.decide('approve', 4242), '4242')

    def test_a_superseded_plan_is_409_saying_so(self):
        alone = self.add_plan(status='superseded', cluster='az1')
        self.assertFault(409, self.decide('approve', alone),
                         'plan %d was superseded: its cluster has no pending plan now; '
                         'only a pending plan can be approved' % alone)
        newer = self.add_plan(cluster='az1')
        self.add_plan(cluster='az2')
        self.assertFault(409, self.decide('reject', alone),
                         'plan %d was superseded by plan %d' % (alone, newer))
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/plans?status=superseded')
        self.assertEqual((200, [alone]), (status, [p['id'] for p in body['plans']]))

    def test_bad_decisions_are_400(self):
        for raw in ('{"approve": {"plan_id": "one"}}', '{"approve": {}}', '{"execute": {}}',
                    '{"approve": {"plan_id": 0}}', '{"approve": {"plan_id": 1}, "reject": {}}',
                    '{"approve":'):
            with self.subTest(raw=raw):
                self.assertFault(400, self.call(self.admin_api, 'POST',
                                                '/loadbalancer/plan/action', raw=raw))


class TestPolicies(api_base.DrsApiTestCase):

    def test_installed_algorithms_are_listed(self):
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/policies')
        self.assertEqual(200, status)
        from nova_drs.api import algorithms
        self.assertEqual(
            sorted((item['kind'], item['name']) for item in algorithms.available()),
            sorted((item['kind'], item['name']) for item in body['policies']))
        for item in body['policies']:
            self.assertIn(item['kind'], algorithms.KINDS)
            self.assertIsInstance(item['parameters'], dict)
            self.assertEqual('object', item['parameters']['type'], item['name'])
        drs = next(i for i in body['policies'] if i['name'] == 'drs')
        self.assertEqual(12, drs['parameters']['properties']['window']['default'])
        # Whole sentences, never a dataclass's generated signature.
        for item in body['policies']:
            self.assertRegex(item['description'], r'\.$', item['name'])
            self.assertNotIn('(window: int', item['description'])
        self.assertIn('cold hosts emptied and suspended', next(i for i in body['policies']
                                            if i['name'] == 'drs')['description'])
        self.assertIn('residuals get zero weight (bisquare) and the line is refitted.',
                      next(i for i in body['policies'] if i['name'] == 'lrr')['description'])


class TestOperatorPolicyOverride(api_base.DrsApiTestCase):

    def test_rules_in_novas_policy_file_override_the_defaults(self):
        from nova import policy as nova_policy
        policy_file = os.path.join(self.state_dir, 'policy.yaml')
        with open(policy_file, 'w') as handle:
            handle.write('"nova_drs:loadbalancer:host:list": "role:member"\n')
        self.flags(policy_file=policy_file, group='oslo_policy')
        nova_policy.reset()
        member = self.api_fixture.api
        self.assertEqual(200, self.call(member, 'GET', '/loadbalancer')[0])
        self.assertFault(403, self.call(member, 'GET', '/loadbalancer/host1'))
        self.assertFault(403, self.call(self.api_fixture.reader_api, 'GET', '/loadbalancer'))
