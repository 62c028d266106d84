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

"""doc/api/openapi.yaml describes exactly the routes the filter serves."""

import os
import re
import unittest

import yaml

from nova_drs import rule_patterns
from nova_drs.api import hosts
from nova_drs.api import middleware
from nova_drs.api import rbac
from nova_drs.api import schemas

OPENAPI = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'doc', 'api',
                       'openapi.yaml')


class TestOpenApiMatchesRoutes(unittest.TestCase):

    def test_paths_and_methods(self):
        with open(OPENAPI) as handle:
            document = yaml.safe_load(handle)
        documented = {(re.sub(r'\{\w+\}', '{}', path), method.upper())
                      for path, operations in document['paths'].items()
                      for method in operations if method != 'parameters'}
        served = {(re.sub(r'\{\w+\}', '{}', '/loadbalancer' + path), method)
                  for path, methods in middleware.ROUTES for method in methods}
        self.assertEqual(served, documented)

    def test_every_operation_names_its_policy(self):
        with open(OPENAPI) as handle:
            document = yaml.safe_load(handle)
        for path, operations in document['paths'].items():
            for method, operation in operations.items():
                if method != 'parameters':
                    self.assertIn('nova_drs:loadbalancer:', operation['x-policy'],
                                  (path, method))

    def test_every_host_action_is_documented_with_its_policy(self):
        with open(OPENAPI) as handle:
            document = yaml.safe_load(handle)
        operation = document['paths']['/loadbalancer/action']['post']
        variants = operation['requestBody']['content']['application/json']['schema']['oneOf']
        self.assertEqual(set(hosts.ACTIONS), {variant['required'][0] for variant in variants})
        for name, action in hosts.ACTIONS.items():
            self.assertIn(action.rule[len(rbac.PREFIX % ''):], operation['x-policy'], name)

    def test_every_operation_documents_the_errors_of_every_request(self):
        """400 (microversion, unknown query parameter), 401 (keystonemiddleware),
        403 (policy), 406 (microversion range); 413 for a body; 503 where the
        DRS database is read."""
        with open(OPENAPI) as handle:
            document = yaml.safe_load(handle)
        for path, operations in document['paths'].items():
            for method, operation in operations.items():
                if method == 'parameters':
                    continue
                expected = {'400', '401', '403', '406'}
                if method == 'post':
                    expected.add('413')
                if path != '/loadbalancer/policies':
                    expected.add('503')
                self.assertLessEqual(expected, set(operation['responses']), (path, method))

    def test_names_are_documented_as_the_api_validates_them(self):
        with open(OPENAPI) as handle:
            document = yaml.safe_load(handle)
        name = document['components']['schemas']['Name']
        self.assertEqual({key: schemas.HOST[key] for key in ('type', 'format', 'minLength',
                                                              'maxLength')},
                         {key: name[key] for key in ('type', 'format', 'minLength',
                                                     'maxLength')})
        self.assertEqual(rule_patterns.MAX_LENGTH, document['paths']['/loadbalancer/rules'][
            'post']['requestBody']['content']['application/json']['schema']['properties'][
            'rule']['properties']['value']['maxLength'])
