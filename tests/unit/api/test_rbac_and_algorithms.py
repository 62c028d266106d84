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

"""RBAC rule defaults (oslo.policy) and the description of installed algorithms."""

import importlib.metadata
import unittest
from unittest import mock

from nova_drs.api import algorithms
from nova_drs.api import rbac


class TestRbacDefaults(unittest.TestCase):

    def test_every_rule_is_admin_only_and_documented(self):
        rules = rbac.list_rules()
        # + clear_wake_failed, enter/exit_maintenance, energy:report, explain
        self.assertEqual(22, len(rules))
        for rule in rules:
            self.assertTrue(rule.name.startswith('nova_drs:loadbalancer:'))
            self.assertEqual('role:admin', rule.check_str)
            self.assertTrue(rule.description)
            self.assertTrue(rule.operations)


class Documented:
    """Moves instances off hosts above the threshold.

    More text that is not shown.
    """

    PARAMETERS = {'threshold': {'type': 'float', 'default': 0.8}}


class Undocumented:
    pass


def _entry_point(name, target):
    return importlib.metadata.EntryPoint(name, target, 'nova_drs.loadbalancer.overload')


class TestDescribe(unittest.TestCase):

    def test_first_docstring_line_and_parameters(self):
        point = _entry_point('threshold', 'x:y')
        with mock.patch.object(importlib.metadata.EntryPoint, 'load', return_value=Documented):
            entry = algorithms.describe('overload', point)
        self.assertEqual({'kind': 'overload', 'name': 'threshold',
                          'description': 'Moves instances off hosts above the threshold.',
                          'parameters': {'threshold': {'type': 'float', 'default': 0.8}},
                          'error': None}, entry)

    def test_plugin_without_docstring_or_parameters(self):
        with mock.patch.object(importlib.metadata.EntryPoint, 'load',
                               return_value=Undocumented):
            entry = algorithms.describe('overload', _entry_point('bare', 'x:y'))
        self.assertEqual((None, {}, None),
                         (entry['description'], entry['parameters'], entry['error']))

    def test_broken_plugin_is_isolated(self):
        entry = algorithms.describe('overload', _entry_point('broken', 'no_such_module:X'))
        self.assertEqual('cannot be loaded: ModuleNotFoundError', entry['error'])
        self.assertIsNone(entry['description'])
