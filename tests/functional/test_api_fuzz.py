"""Hypothesis-generated bodies against the POST routes: never a 5xx, always a nova fault."""

import json

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.functional import test_api_hosts

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


class TestFuzzNeverServerError(test_api_hosts.LoadBalancerApiTestCase):

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
