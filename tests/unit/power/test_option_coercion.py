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

"""The API types string power options by the driver's schema."""

import unittest

from nova_drs import exception
from nova_drs.power import base

SCHEMA = {'type': 'object', 'properties': {
    'port': {'type': 'integer'}, 'delay': {'type': 'number'},
    'lanplus': {'type': 'boolean'}, 'address': {'type': 'string'},
    'suspend_via': {'type': 'object', 'properties': {'port': {'type': 'integer'}}}}}


class CoerceOptionsTest(unittest.TestCase):

    def test_strings_take_the_schemas_type(self):
        self.assertEqual(
            {'port': 623, 'delay': 2.5, 'lanplus': False, 'address': '10.0.0.3',
             'suspend_via': {'port': 22}},
            base.coerce_options({'port': '623', 'delay': '2.5', 'lanplus': 'no',
                                 'address': '10.0.0.3', 'suspend_via': {'port': '22'}},
                                SCHEMA))

    def test_typed_values_and_unknown_options_are_kept(self):
        options = {'port': 623, 'lanplus': True, 'extra': '5'}
        self.assertEqual(options, base.coerce_options(options, SCHEMA))

    def test_what_does_not_convert_is_left_for_validation_to_refuse(self):
        for options in ({'port': 'ipmi'}, {'port': '6.5'}, {'delay': 'nan'},
                        {'lanplus': 'maybe'}):
            with self.subTest(options=options):
                typed = base.coerce_options(options, SCHEMA)
                self.assertEqual(options, typed)
                with self.assertRaises(exception.PowerError):
                    base.validate_options(typed, SCHEMA)
