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

from nova_drs.api import hosts
from nova_drs.api import middleware
from nova_drs.api import rbac

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
