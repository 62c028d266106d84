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

"""Hypothesis-generated requests: never a 5xx, always a nova fault, never a non-admin 2xx.

The first tests aim bodies at the POST routes; TestFuzzEveryRouteEveryRole
sends >= 2,000 generated requests (methods, paths with arbitrary bytes, ids
of every kind, queries, bodies with lone surrogates and control characters,
microversions) to every route as admin, member, reader, a user with another
role and a member of another project.
"""

import collections
import json
from urllib import parse

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from nova.tests.functional.api import client as api_client

from tests.functional import api_base

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=300),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=20), children, max_size=4),
    max_leaves=12)

HOST_NAMES = st.one_of(st.sampled_from(['host1', 'host2', 'host3', '', ' ', 'h' * 256]),
                       st.text(max_size=300))
HOST_ACTION_BODIES = st.one_of(
    st.fixed_dictionaries({}, optional={
        'suspend_host': st.fixed_dictionaries({'host': HOST_NAMES}) | JSON_VALUES,
        'unsuspend_host': st.fixed_dictionaries({'host': HOST_NAMES}) | JSON_VALUES,
        'wake_test': st.fixed_dictionaries({'host': HOST_NAMES}) | JSON_VALUES,
        'set_power': st.fixed_dictionaries(
            {'host': HOST_NAMES}, optional={'driver': JSON_VALUES, 'mode': JSON_VALUES,
                                            'mac_to_wake': JSON_VALUES,
                                            'options': JSON_VALUES}),
    }),
    JSON_VALUES)
RULE_BODIES = st.one_of(
    st.fixed_dictionaries({'rule': st.fixed_dictionaries({}, optional={
        'type': st.sampled_from(['host', 'aggregate', 'availability_zone']) | JSON_VALUES,
        'value': st.text(max_size=300) | JSON_VALUES,
        'allow': st.booleans() | JSON_VALUES,
    })}),
    JSON_VALUES)
PLAN_BODIES = st.one_of(
    st.fixed_dictionaries({}, optional={
        'approve': st.fixed_dictionaries({'plan_id': st.integers() | JSON_VALUES}),
        'reject': st.fixed_dictionaries({'plan_id': st.integers() | JSON_VALUES}),
    }),
    JSON_VALUES)
RAW_BODIES = st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode))

FUZZ = settings(max_examples=70, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


class TestFuzzNeverServerError(api_base.DrsApiTestCase):

    def check(self, path, raw):
        response = self.admin_api.api_request(path, method='POST', body=raw,
                                              check_response_status=None)
        self.assertLess(response.status_code, 500, response.text)
        body = response.json() if response.content else None
        if response.status_code >= 400:
            (fault,) = body.values()
            self.assertEqual(response.status_code, fault['code'])
            self.assertIsInstance(fault['message'], str)

    @FUZZ
    @given(HOST_ACTION_BODIES)
    def test_host_actions(self, body):
        self.check('/loadbalancer/action', json.dumps(body))

    @FUZZ
    @given(RULE_BODIES)
    def test_rules(self, body):
        self.check('/loadbalancer/rules', json.dumps(body))

    @settings(FUZZ, max_examples=30)
    @given(PLAN_BODIES)
    def test_plan_actions(self, body):
        self.check('/loadbalancer/plan/action', json.dumps(body))

    @settings(FUZZ, max_examples=30)
    @given(st.sampled_from(['/loadbalancer/action', '/loadbalancer/rules',
                            '/loadbalancer/plan/action']), RAW_BODIES)
    def test_raw_bytes(self, path, raw):
        self.check(path, raw)


# --- every route, every role ------------------------------------------------

#: Text as attackers and careless scripts send it: any code point, lone
#: surrogates and control characters included.
NASTY_TEXT = st.text(st.characters() | st.characters(min_codepoint=0xd800, max_codepoint=0xdfff)
                     | st.characters(max_codepoint=0x1f), max_size=40)
NASTY_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | NASTY_TEXT,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(NASTY_TEXT, children, max_size=3),
    max_leaves=8)
ACTION_NAMES = st.sampled_from(['suspend_host', 'unsuspend_host', 'wake_test', 'set_power',
                                'clear_wake_failed', 'enter_maintenance', 'exit_maintenance',
                                'scale_server', 'approve', 'reject', 'rule'])
ARGUMENTS = st.fixed_dictionaries({}, optional={
    'host': HOST_NAMES | NASTY_TEXT,
    'driver': st.sampled_from(['noop', 'ipmi', 'wol']) | NASTY_TEXT,
    'mode': st.sampled_from(['s3', 'off']) | NASTY_VALUES, 'options': NASTY_VALUES,
    'mac_to_wake': NASTY_VALUES, 'server': NASTY_TEXT, 'flavor': NASTY_TEXT,
    'plan_id': st.integers() | NASTY_VALUES, 'type': NASTY_VALUES, 'value': NASTY_TEXT,
    'allow': NASTY_VALUES})
BODIES = st.one_of(
    st.dictionaries(ACTION_NAMES, ARGUMENTS | NASTY_VALUES, min_size=1, max_size=2)
    .map(json.dumps).map(str.encode),
    NASTY_VALUES.map(json.dumps).map(str.encode),
    st.binary(max_size=64),
    st.none())
#: A path segment: known names, ids of every kind, and arbitrary bytes, percent-encoded.
SEGMENTS = st.one_of(
    st.sampled_from(['host1', 'host2', 'nosuch', '1', '2', '0', '\u00b2', '\u2460',
                     '9' * 5000, '-1', 'rules', 'plan', 'action', 'requests']).map(
        lambda text: parse.quote(text, safe='')),
    st.binary(min_size=1, max_size=12).map(lambda raw: parse.quote_from_bytes(raw, safe='')))
PATHS = st.one_of(
    st.just('/loadbalancer'),
    st.sampled_from(['/loadbalancer/action', '/loadbalancer/rules', '/loadbalancer/plan',
                     '/loadbalancer/plan/action', '/loadbalancer/policies']),
    SEGMENTS.map(lambda segment: '/loadbalancer/' + segment),
    SEGMENTS.map(lambda segment: '/loadbalancer/rules/' + segment),
    SEGMENTS.map(lambda segment: '/loadbalancer/requests/' + segment),
    SEGMENTS.map(lambda segment: '/loadbalancer/explain/hosts/' + segment),
    SEGMENTS.map(lambda segment: '/loadbalancer/explain/servers/' + segment))
QUERIES = st.one_of(
    st.just(''),
    st.lists(st.tuples(st.sampled_from(['cluster', 'limit', 'host', 'cycles']) | NASTY_TEXT,
                       NASTY_TEXT), max_size=3)
    .map(lambda pairs: '?' + '&'.join(parse.quote(k.encode('utf-8', 'surrogatepass'), safe='')
                                      + '=' + parse.quote(v.encode('utf-8', 'surrogatepass'),
                                                          safe='') for k, v in pairs)),
    st.binary(max_size=16).map(lambda raw: '?cluster=' + parse.quote_from_bytes(raw, safe='')))
MICROVERSIONS = st.one_of(
    st.sampled_from(['latest', '2.1', '2.93', '99.0', '2.0', 'foo', '', '2.', '1.1']),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e), max_size=8))
WILD_REQUESTS = st.tuples(st.sampled_from(['GET', 'POST', 'DELETE', 'PUT', 'PATCH']),
                          PATHS, QUERIES, BODIES, MICROVERSIONS)
#: Requests an admin script would send, slightly off: they reach the controllers.
PLAUSIBLE_REQUESTS = st.one_of(
    st.tuples(st.just('GET'), st.sampled_from(['/loadbalancer', '/loadbalancer/host1',
                                               '/loadbalancer/rules', '/loadbalancer/rules/1',
                                               '/loadbalancer/plan', '/loadbalancer/policies',
                                               '/loadbalancer/requests/1']),
              st.sampled_from(['', '?cluster=c1']), st.none(), st.just('latest')),
    st.tuples(st.just('GET'), st.sampled_from(['/loadbalancer/explain/hosts/host1',
                                               '/loadbalancer/explain/hosts/nosuch',
                                               '/loadbalancer/explain/servers/nosuch']),
              st.sampled_from(['', '?cycles=1', '?cycles=100', '?cycles=0', '?cycles=101',
                               '?cycles=' + '9' * 7, '?cycles=1&cycles=2']),
              st.none(), st.just('latest')),
    st.tuples(st.just('POST'), st.just('/loadbalancer/action'), st.just(''),
              st.dictionaries(ACTION_NAMES, ARGUMENTS, min_size=1, max_size=1)
              .map(json.dumps).map(str.encode)
              | HOST_ACTION_BODIES.map(json.dumps).map(str.encode),
              st.just('latest')),
    st.tuples(st.just('POST'), st.just('/loadbalancer/rules'), st.just(''),
              RULE_BODIES.map(json.dumps).map(str.encode), st.just('latest')),
    st.tuples(st.just('POST'), st.just('/loadbalancer/plan/action'), st.just(''),
              PLAN_BODIES.map(json.dumps).map(str.encode), st.just('latest')),
    st.tuples(st.just('DELETE'), st.just('/loadbalancer/rules/'), st.just(''), st.none(),
              st.just('latest')).map(lambda r: (r[0], r[1] + '1') + r[2:]))
REQUESTS = PLAUSIBLE_REQUESTS | WILD_REQUESTS
#: Requests per generated example: one per identity below.
ROLES = ('admin', 'member', 'reader', 'other role', 'other project')
MIN_REQUESTS = 2000


class TestFuzzEveryRouteEveryRole(api_base.DrsApiTestCase):
    """Each generated request is sent as admin and as every kind of non-admin."""

    def setUp(self):
        super().setUp()
        fixture = self.api_fixture
        self.identities = {
            'admin': fixture.admin_api, 'member': fixture.api, 'reader': fixture.reader_api,
            'other role': fixture.other_api,
            'other project': api_client.TestOpenStackClient(
                'stranger', fixture.base_url.replace(fixture.project_id, 'otherproject'),
                project_id='otherproject', roles=['reader', 'member'])}
        self.statuses = collections.Counter()

    def send(self, role, method, path, body, microversion):
        api = self.identities[role]
        api.microversion = microversion
        try:
            response = api.api_request(path, method=method, body=body,
                                       check_response_status=None)
        finally:
            api.microversion = 'latest'
        self.statuses[role, response.status_code // 100] += 1
        where = '%s %s %r as %s (microversion %r)' % (method, path[:200], body and body[:200],
                                                      role, microversion)
        self.assertLess(response.status_code, 500, '%s: %s' % (where, response.text[:500]))
        if role != 'admin':
            self.assertGreaterEqual(response.status_code, 300,
                                    '%s: %s' % (where, response.text[:500]))

    def test_no_5xx_and_no_non_admin_2xx(self):
        @settings(max_examples=MIN_REQUESTS // len(ROLES) + 100, deadline=None, derandomize=True,
                  suppress_health_check=list(HealthCheck), database=None)
        @given(REQUESTS)
        def fuzz(request):
            method, path, query, body, microversion = request
            for role in ROLES:
                self.send(role, method, path + query, body, microversion)

        fuzz()
        total = sum(self.statuses.values())
        print('fuzz: %d requests; (role, status class) -> count: %s'
              % (total, dict(sorted(self.statuses.items()))))
        self.assertGreaterEqual(total, MIN_REQUESTS)
        self.assertEqual(0, sum(count for (_, klass), count in self.statuses.items()
                                if klass == 5))
        # The generator reaches the admin's success and error paths alike.
        self.assertGreater(self.statuses['admin', 2], 0)
        self.assertGreater(self.statuses['admin', 4], 0)
