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

"""novaclient manager for the nova-drs ``/loadbalancer`` API (``cs.lb``)."""

from urllib import parse

from novaclient import base


class LoadBalancerManager(base.Manager):
    """Calls of the loadbalancer API; every method returns the decoded JSON."""

    def list_hosts(self):
        return self.client.get('/loadbalancer')[1]['hosts']

    def get_host(self, host):
        return self.client.get('/loadbalancer/%s' % parse.quote(host, safe=''))[1]['host']

    def _action(self, name, **arguments):
        return self.client.post('/loadbalancer/action', body={name: arguments})[1]

    def suspend(self, host):
        return self._action('suspend_host', host=host)['host']

    def unsuspend(self, host):
        return self._action('unsuspend_host', host=host)['host']

    def clear_wake_failed(self, host):
        return self._action('clear_wake_failed', host=host)['host']

    def enter_maintenance(self, host):
        return self._action('enter_maintenance', host=host)['host']

    def exit_maintenance(self, host):
        return self._action('exit_maintenance', host=host)['host']

    def wake_test(self, host):
        return self._action('wake_test', host=host)['request']

    def set_power(self, host, driver, mode=None, mac_to_wake=None, options=None):
        arguments = {'host': host, 'driver': driver}
        if mode is not None:
            arguments['mode'] = mode
        if mac_to_wake is not None:
            arguments['mac_to_wake'] = mac_to_wake
        if options:
            arguments['options'] = options
        return self._action('set_power', **arguments)['host']

    def list_rules(self):
        return self.client.get('/loadbalancer/rules')[1]['rules']

    def create_rule(self, rule_type, value, allow):
        body = {'rule': {'type': rule_type, 'value': value, 'allow': allow}}
        return self.client.post('/loadbalancer/rules', body=body)[1]['rule']

    def delete_rule(self, rule_id):
        self.client.delete('/loadbalancer/rules/%s' % parse.quote(str(rule_id), safe=''))

    def get_plan(self, cluster=None):
        url = '/loadbalancer/plan'
        if cluster:
            url += '?' + parse.urlencode({'cluster': cluster})
        return self.client.get(url)[1]['plan']

    def decide_plan(self, decision, plan_id):
        body = {decision: {'plan_id': plan_id}}
        return self.client.post('/loadbalancer/plan/action', body=body)[1]['plan']

    def list_policies(self):
        return self.client.get('/loadbalancer/policies')[1]['policies']

    def scale_server(self, server_id, flavor):
        return self._action('scale_server', server=server_id, flavor=flavor)['request']

    def explain(self, kind, subject, cycles):
        """Stored decisions about a host or a server (kind "host" or "server")."""
        return self.client.get('/loadbalancer/explain/%ss/%s?cycles=%d'
                               % (kind, parse.quote(subject, safe=''), cycles))[1]

    def get_request(self, request_id):
        return self.client.get('/loadbalancer/requests/%s'
                               % parse.quote(str(request_id), safe=''))[1]['request']
