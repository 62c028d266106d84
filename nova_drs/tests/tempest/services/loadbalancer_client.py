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

    def list_hosts(self):
        resp, body = self.get('loadbalancer')
        self.expected_success(200, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))

    def show_host(self, host):
        resp, body = self.get('loadbalancer/%s' % host)
        self.expected_success(200, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))

    def host_action(self, action, expected=202, **arguments):
        resp, body = self.post('loadbalancer/action', json.dumps({action: arguments}))
        self.expected_success(expected, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))

    def create_rule(self, rule_type, value, allow):
        resp, body = self.post('loadbalancer/rules', json.dumps(
            {'rule': {'type': rule_type, 'value': value, 'allow': allow}}))
        self.expected_success(201, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))

    def list_rules(self):
        resp, body = self.get('loadbalancer/rules')
        self.expected_success(200, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))

    def show_rule(self, rule_id):
        resp, body = self.get('loadbalancer/rules/%s' % rule_id)
        self.expected_success(200, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))

    def delete_rule(self, rule_id):
        resp, body = self.delete('loadbalancer/rules/%s' % rule_id)
        self.expected_success(204, resp.status)
        return rest_client.ResponseBody(resp, body)

    def show_plan(self):
        resp, body = self.get('loadbalancer/plan')
        self.expected_success(200, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))

    def decide_plan(self, decision, plan_id):
        """``approve`` or ``reject`` a pending plan (409 once a newer cycle superseded it)."""
        resp, body = self.post('loadbalancer/plan/action',
                               json.dumps({decision: {'plan_id': plan_id}}))
        self.expected_success(202, resp.status)
        return rest_client.ResponseBody(resp, json.loads(body))
