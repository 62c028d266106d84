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


def _rules(*rules):
    return cloud_view.Rules([{'type': t, 'value': v, 'allow': a} for t, v, a in rules])


def test_default_allows():
    assert _rules().allows('compute1', [])


def test_last_match_wins():
    rules = _rules(('host', 'compute.*', False), ('host', 'compute1', True))
    assert rules.allows('compute1', [])
    assert not rules.allows('compute2', [])


def test_regex_must_match_whole_name():
    rules = _rules(('host', 'compute1', False))
    assert not rules.allows('compute1', [])
    assert rules.allows('compute10', [])


def test_aggregate_and_zone_rules():
    rules = _rules(('aggregate', 'gpu-.*', False), ('availability_zone', 'az2', False))
    assert not rules.allows('c1', [('gpu-a', {})])
    assert rules.allows('c1', [('cpu-a', {})])
    assert not rules.allows('c1', [], service={'zone': 'az2'})
    assert rules.allows('c1', [], service={'zone': 'az1'})


def test_bad_stored_rule_is_disabled_with_one_warning(caplog):
    stored = [{'id': 901, 'type': 'host', 'value': 'compute[0-9', 'allow': False},
              {'id': 902, 'type': 'host', 'value': '(a+)+$', 'allow': False},
              {'id': 903, 'type': 'rack', 'value': 'r1', 'allow': False},
              {'id': 904, 'type': 'host', 'value': 'compute1', 'allow': False}]
    with caplog.at_level('WARNING', logger='nova_drs.daemon.cloud_view'):
        for _ in range(3):
            rules = cloud_view.Rules(stored)
    assert not rules.allows('compute1', [])
    assert rules.allows('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!', [])
    warnings = [r.getMessage() for r in caplog.records]
    assert [w.split(' (')[0] for w in warnings] == ['rule 901', 'rule 902', 'rule 903']
