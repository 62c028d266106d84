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
    assert not rules.allows('c1', [{'name': 'gpu-a'}])
    assert rules.allows('c1', [{'name': 'cpu-a'}])
    assert not rules.allows('c1', [], service={'zone': 'az2'})
    assert rules.allows('c1', [], service={'zone': 'az1'})
