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

"""REST client for nova-api's ``/loadbalancer`` routes (nova-drs's paste filter)."""

import json

from tempest.lib.common import rest_client


class LoadBalancerClient(rest_client.RestClient):
    """GET /loadbalancer[/{host}], POST /loadbalancer/action, /loadbalancer/rules,
    /loadbalancer/plan."""

    def _answer(self, expected, resp, body):
        self.expected_success(expected, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body) if body else body)

    def _get(self, path):
        return self._answer(200, *self.get(path))

    def _post(self, path, document, expected):
        return self._answer(expected, *self.post(path, json.dumps(document)))

    def list_hosts(self):
        return self._get('loadbalancer')

    def show_host(self, host):
        return self._get('loadbalancer/%s' % host)

    def host_action(self, action, expected=202, **arguments):
        return self._post('loadbalancer/action', {action: arguments}, expected)

    def create_rule(self, rule_type, value, allow):
        return self._post('loadbalancer/rules',
                          {'rule': {'type': rule_type, 'value': value, 'allow': allow}}, 201)

    def list_rules(self):
        return self._get('loadbalancer/rules')

    def show_rule(self, rule_id):
        return self._get('loadbalancer/rules/%s' % rule_id)

    def delete_rule(self, rule_id):
        return self._answer(204, *self.delete('loadbalancer/rules/%s' % rule_id))

    def show_plan(self):
        return self._get('loadbalancer/plan')

    def decide_plan(self, decision, plan_id):
        """``approve`` or ``reject`` a pending plan (409 once a newer cycle superseded it)."""
        return self._post('loadbalancer/plan/action', {decision: {'plan_id': plan_id}}, 202)
