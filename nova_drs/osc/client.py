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

"""HTTP client of the nova-drs ``/loadbalancer`` API for the OSC plugin."""

from urllib import parse

from keystoneauth1 import adapter
from osc_lib import exceptions


def _error_message(response):
    """nova's fault message (``{"conflictingRequest": {"message": ...}}``) or the text."""
    try:
        body = response.json()
        (fault,) = body.values()
        message = fault['message']
    except (ValueError, TypeError, KeyError, AttributeError):
        message = response.text.strip() or response.reason
    return '%s (HTTP %d)' % (message, response.status_code)


def _quote(value):
    return parse.quote(str(value), safe='')


class DrsClient:
    """Every method returns the decoded JSON of one API call."""

    def __init__(self, session, region_name=None, interface=None):
        self.adapter = adapter.Adapter(session=session, service_type='compute',
                                       region_name=region_name, interface=interface)

    def _request(self, method, path, body=None):
        response = self.adapter.request(path, method, json=body, raise_exc=False)
        if response.status_code >= 400:
            raise exceptions.CommandError(_error_message(response))
        return response.json() if response.content else None

    def list_hosts(self):
        return self._request('GET', '/loadbalancer')['hosts']

    def get_host(self, host):
        return self._request('GET', '/loadbalancer/%s' % _quote(host))['host']

    def action(self, name, **arguments):
        return self._request('POST', '/loadbalancer/action', {name: arguments})

    def list_rules(self):
        return self._request('GET', '/loadbalancer/rules')['rules']

    def create_rule(self, rule_type, value, allow):
        body = {'rule': {'type': rule_type, 'value': value, 'allow': allow}}
        return self._request('POST', '/loadbalancer/rules', body)['rule']

    def delete_rule(self, rule_id):
        self._request('DELETE', '/loadbalancer/rules/%s' % _quote(rule_id))

    def get_plan(self, cluster=None):
        path = '/loadbalancer/plan'
        if cluster:
            path += '?' + parse.urlencode({'cluster': cluster})
        return self._request('GET', path)['plan']

    def decide_plan(self, decision, plan_id):
        body = {decision: {'plan_id': plan_id}}
        return self._request('POST', '/loadbalancer/plan/action', body)['plan']

    def list_policies(self):
        return self._request('GET', '/loadbalancer/policies')['policies']

    def energy_report(self, since, cluster=None):
        query = {'since': since}
        if cluster:
            query['cluster'] = cluster
        return self._request('GET', '/loadbalancer/energy?' + parse.urlencode(query))['energy']

    def explain(self, kind, subject, cycles):
        """Stored decisions about a host or a server (kind "host" or "server")."""
        return self._request('GET', '/loadbalancer/explain/%ss/%s?cycles=%d'
                             % (kind, _quote(subject), cycles))

    def get_request(self, request_id):
        return self._request('GET', '/loadbalancer/requests/%s' % _quote(request_id))['request']
