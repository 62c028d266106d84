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

"""Aggregate membership: one map per cycle or request, the same from nova's
objects and from the REST API's dicts."""

import types

from nova_drs import cluster_policy
from nova_drs import membership


def test_each_host_gets_its_aggregates_in_name_order():
    found = membership.of_hosts([('zeta', {'drs_policy': 'power_saving'}, ['h1']),
                                 ('alpha', None, ['h1', 'h2']),
                                 ('empty', {}, None)])
    assert found == {'h1': [('alpha', {}), ('zeta', {'drs_policy': 'power_saving'})],
                     'h2': [('alpha', {})]}
    # The first of them carrying drs_policy is the host's cluster.
    assert cluster_policy.cluster_name(found['h1']) == 'zeta'
    assert cluster_policy.cluster_name(found['h2']) == cluster_policy.DEFAULT_CLUSTER


def test_listed_dicts_and_nova_objects_read_the_same():
    listed = [{'name': 'gold', 'metadata': {'drs_policy': 'power_saving'},
               'hosts': ['h1', 'h3']},
              {'name': 'az', 'hosts': ['h2']}]
    objects = [types.SimpleNamespace(name=a['name'], metadata=a.get('metadata'),
                                     hosts=a['hosts']) for a in listed]
    assert membership.of_listed(listed) == membership.of_hosts(
        (a.name, a.metadata, a.hosts) for a in objects)
    assert membership.of_listed(listed)['h2'] == [('az', {})]
