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

"""Request-body validation: what passes, and the message of what does not."""

import unittest

from nova_drs import exception
from nova_drs.api import hosts
from nova_drs.api import schemas


class TestSingleAction(unittest.TestCase):

    def check(self, body):
        return schemas.single_action(body, hosts.ACTION_SCHEMAS)

    def assertRejected(self, body, fragment):
        with self.assertRaises(exception.ValidationError) as caught:
            self.check(body)
        self.assertIn(fragment, str(caught.exception))
        return str(caught.exception)

    def test_valid_actions(self):
        self.assertEqual(('suspend_host', {'host': 'compute3'}),
                         self.check({'suspend_host': {'host': 'compute3'}}))
        body = {'set_power': {'host': 'c1', 'driver': 'ipmi', 'mode': 's3',
                              'mac_to_wake': '52:54:00:12:34:56',
                              'options': {'password': 'x', 'port': 623}}}
        self.assertEqual('set_power', self.check(body)[0])

    def test_shape_errors(self):
        self.assertRejected([], 'must be a JSON object')
        self.assertRejected({}, 'exactly one action expected')
        self.assertRejected({'suspend_host': {'host': 'a'}, 'wake_test': {'host': 'a'}},
                            'got 2: suspend_host, wake_test')
        self.assertRejected({'reboot': {}}, "unknown action 'reboot'")

    def test_host_errors(self):
        self.assertRejected({'suspend_host': {}}, "'host' is a required property")
        self.assertRejected({'suspend_host': {'host': ''}}, 'too short')
        message = self.assertRejected({'suspend_host': {'host': 'h' * 10000}}, 'too long')
        self.assertLess(len(message), 400)
        self.assertRejected({'suspend_host': {'host': ' padded '}}, 'whitespace')
        self.assertRejected({'suspend_host': {'host': 'a\nb'}}, 'printable')
        # nova's own name rules: control characters and lone surrogates refused.
        for bad in ('a\x00b', 'a\x7fb', '\ud800', 'a\u2028b', 'x\udfff'):
            self.assertRejected({'suspend_host': {'host': bad}}, 'printable')
        self.assertEqual('suspend_host', self.check({'suspend_host': {'host': 'ä b'}})[0])
        self.assertRejected({'suspend_host': {'host': 'a', 'x': 1}},
                            'Additional properties')

    def test_a_trailing_newline_is_refused_everywhere(self):
        for body in ({'suspend_host': {'host': 'host1\n'}},
                     {'set_power': {'host': 'a', 'driver': 'ipmi\n'}},
                     {'set_power': {'host': 'a', 'driver': 'x',
                                    'mac_to_wake': '52:54:00:12:34:56\n'}},
                     {'scale_server': {'server': '9168b536-cd40-4630-b43f-b259807c6e87\n',
                                       'flavor': 'm1'}}):
            with self.subTest(body=body):
                self.assertRaises(exception.ValidationError, self.check, body)

    def test_braces_in_values_do_not_break_messages(self):
        self.assertRejected({'set_power': {'host': 'a', 'driver': 'x', 'options': '{x}'}},
                            "'{x}' is not of type 'object'")

    def test_set_power_errors(self):
        self.assertRejected({'set_power': {'host': 'a', 'driver': 'x', 'mode': 's5'}},
                            "'s5' is not one of")
        self.assertRejected({'set_power': {'host': 'a', 'driver': 'x', 'mac_to_wake': 'zz'}},
                            'pattern')


class TestRuleAndPlanSchemas(unittest.TestCase):

    def test_rule_value_with_a_lone_surrogate_is_refused(self):
        with self.assertRaises(exception.ValidationError) as caught:
            schemas.validate({'rule': {'type': 'host', 'value': 'a\ud800', 'allow': True}},
                             schemas.RULE)
        self.assertIn('printable', str(caught.exception))
        schemas.validate({'rule': {'type': 'host', 'value': 'comp ute.*', 'allow': True}},
                         schemas.RULE)

    def test_rule(self):
        schemas.validate({'rule': {'type': 'aggregate', 'value': 'gpu.*', 'allow': False}},
                         schemas.RULE)
        with self.assertRaises(exception.ValidationError):
            schemas.validate({'rule': {'type': 'rack', 'value': 'x', 'allow': True}},
                             schemas.RULE)
        with self.assertRaises(exception.ValidationError):
            schemas.validate({'rule': {'type': 'host', 'value': 'x', 'allow': 1}},
                             schemas.RULE)

    def test_plan_decision(self):
        self.assertEqual(('approve', {'plan_id': 3}),
                         schemas.single_action({'approve': {'plan_id': 3}},
                                               schemas.PLAN_ACTIONS))
        for plan_id in (0, -1, '3', 2 ** 31, True, 1.5):
            with self.subTest(plan_id=plan_id), self.assertRaises(exception.ValidationError):
                schemas.single_action({'reject': {'plan_id': plan_id}}, schemas.PLAN_ACTIONS)


class TestObjectId(unittest.TestCase):

    def test_only_ascii_digits_in_range(self):
        self.assertEqual(7, schemas.object_id('7'))
        self.assertEqual(2 ** 31 - 1, schemas.object_id(str(2 ** 31 - 1)))
        for text in ('\u00b2', '\u2460', '\u0663', '9' * 5000, '0', '-1', '1.0', '',
                     str(2 ** 31), ' 1', '1\n'):
            self.assertIsNone(schemas.object_id(text), text[:20])


class TestQuery(unittest.TestCase):

    def test_plan_query(self):
        schemas.validate_query({'cluster': ['gpu']}, schemas.PLAN_QUERY)
        for query, fragment in (({'cluster': ['a', 'b']}, 'at most 1 time'),
                                ({'cluster': ['\x01']}, 'printable'),
                                ({'limit': ['1']}, 'Additional properties')):
            with self.assertRaises(exception.ValidationError) as caught:
                schemas.validate_query(query, schemas.PLAN_QUERY)
            self.assertIn(fragment, str(caught.exception))
            self.assertIn('query parameter', str(caught.exception))
