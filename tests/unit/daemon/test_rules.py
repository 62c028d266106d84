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

from nova_drs.daemon import cloud_view


def allowed(rules, host, aggregates, service=None):
    """Whether the deciding rule (the last match; none: default allow) allows."""
    rule = rules.deciding(host, aggregates, service=service)
    return rule is None or bool(rule['allow'])


def _rules(*rules):
    return cloud_view.Rules([{'type': t, 'value': v, 'allow': a} for t, v, a in rules])


def test_default_allows():
    assert allowed(_rules(), 'compute1', [])


def test_last_match_wins():
    rules = _rules(('host', 'compute.*', False), ('host', 'compute1', True))
    assert allowed(rules, 'compute1', [])
    assert not allowed(rules, 'compute2', [])


def test_regex_must_match_whole_name():
    rules = _rules(('host', 'compute1', False))
    assert not allowed(rules, 'compute1', [])
    assert allowed(rules, 'compute10', [])


def test_aggregate_and_zone_rules():
    rules = _rules(('aggregate', 'gpu-.*', False), ('availability_zone', 'az2', False))
    assert not allowed(rules, 'c1', [('gpu-a', {})])
    assert allowed(rules, 'c1', [('cpu-a', {})])
    assert not allowed(rules, 'c1', [], service={'zone': 'az2'})
    assert allowed(rules, 'c1', [], service={'zone': 'az1'})


def test_bad_stored_rule_is_disabled_with_one_warning(caplog):
    stored = [{'id': 901, 'type': 'host', 'value': 'compute[0-9', 'allow': False},
              {'id': 902, 'type': 'host', 'value': '(a+)+$', 'allow': False},
              {'id': 903, 'type': 'rack', 'value': 'r1', 'allow': False},
              {'id': 904, 'type': 'host', 'value': 'compute1', 'allow': False}]
    with caplog.at_level('WARNING', logger='nova_drs.daemon.cloud_view'):
        for _ in range(3):
            rules = cloud_view.Rules(stored)
    assert not allowed(rules, 'compute1', [])
    assert allowed(rules, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!', [])
    warnings = [r.getMessage() for r in caplog.records]
    assert [w.split(' (')[0] for w in warnings] == ['rule 901', 'rule 902', 'rule 903']
