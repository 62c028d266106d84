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

"""nova_drs.aggregate_keys: every key parsed, one warning, combination."""

import logging
import os
import re

from nova import objects
from nova.scheduler import host_manager
from oslo_config import fixture as config_fixture
import pytest

from nova_drs import aggregate_keys
from nova_drs import cluster_policy
from nova_drs import conf as drs_conf
from nova_drs.daemon import planning
from nova_drs.loadbalancer import drs
from nova_drs.weights import base

objects.register_all()

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CURVE = '100,110,120,130,140,150,160,170,180,190,200'

#: key -> (raw valid value, parsed value, invalid raw values)
SAMPLES = {
    'drs_policy': (' Power_Saving ', 'power_saving', ('chaos',)),
    'drs_automation': ('Manual', 'manual', ('sometimes',)),
    'cpu_allocation_ratio': ('2.5', 2.5, ('abc', '0', '-1', '1e9', 'nan')),
    'ram_allocation_ratio': ('1.5', 1.5, ('abc', '0', '100.01')),
    'min_active_hosts': ('3', 3, ('many', '-1', '1.5')),
    'hosts_in_reserve': ('0', 0, ('x', '-2')),
    'high_utilization': ('70', 70.0, ('0.5', '101', 'high', 'inf')),
    'low_utilization': ('0', 0.0, ('-1', '100.5', 'low')),
    'overcommit_duration': ('5', 5.0, ('0', '1441', 'long')),
    'balance_tolerance': ('2.5', 2.5, ('-0.1', '101', 'x')),
    'drs_power_saving_weight_multiplier': ('-2', -2.0, ('x', 'inf')),
    'drs_even_distribution_weight_multiplier': ('10', 10.0, ('x', 'nan')),
    'drs_migration_weight_multiplier': ('0.5', 0.5, ('x',)),
    'drs_scale_enabled': ('yes', True, ('maybe',)),
    'drs_power_curve': (CURVE, tuple(float(x) for x in CURVE.split(',')),
                        ('1,2,3', '200,100,0,0,0,0,0,0,0,0,0')),
}


@pytest.fixture
def warnings(caplog):
    caplog.set_level(logging.WARNING, aggregate_keys.LOG.name)
    return caplog


def test_every_key_declared_has_samples_and_names_its_option():
    assert set(SAMPLES) == set(aggregate_keys.KEYS)
    for key in aggregate_keys.KEYS.values():
        assert key.overrides and key.combine and key.expected, key.name


@pytest.mark.parametrize('name', sorted(SAMPLES))
def test_valid_value_parsed(name):
    raw, parsed, _invalid = SAMPLES[name]
    reader = aggregate_keys.Reader()
    assert reader.value('agg', {name: raw}, name, 'fallback') == parsed
    assert reader.value('agg', {}, name, 'fallback') == 'fallback'


@pytest.mark.parametrize('name', sorted(SAMPLES))
def test_invalid_value_falls_back_with_one_warning(name, warnings):
    reader = aggregate_keys.Reader()
    for bad in SAMPLES[name][2]:
        warnings.clear()
        for _ in range(20):  # 20 hosts or requests meet the same value
            assert reader.value('gold', {name: bad}, name, 'fallback') == 'fallback'
        expected = "aggregate gold: ignoring invalid metadata %s=%r" % (name, bad)
        assert warnings.text.count(expected) == 1, (name, bad, warnings.text)


def test_smallest_valid_value_wins_across_aggregates(warnings):
    reader = aggregate_keys.Reader()
    aggregates = [('a', {'cpu_allocation_ratio': '4'}), ('b', {'cpu_allocation_ratio': '2'}),
                  ('c', {'cpu_allocation_ratio': 'bad'}), ('d', {})]
    assert reader.smallest(aggregates, 'cpu_allocation_ratio', 16.0) == 2.0
    assert reader.smallest([('d', {})], 'cpu_allocation_ratio', 16.0) == 16.0
    assert reader.smallest([('c', {'cpu_allocation_ratio': 'bad'})],
                           'cpu_allocation_ratio', 16.0) == 16.0
    assert warnings.text.count("ignoring invalid metadata cpu_allocation_ratio='bad'") == 1


def test_cluster_keys_come_from_the_cluster_aggregate():
    resolver = cluster_policy.Resolver()
    aggregates = [('zz-other', {'high_utilization': '10'}),
                  ('b-cluster', {'drs_policy': 'power_saving', 'high_utilization': '70'}),
                  ('c-cluster', {'drs_policy': 'power_saving', 'high_utilization': '60'})]
    assert resolver.cluster_value(aggregates, 'high_utilization', 80) == 70.0
    # outside every DRS cluster: the option
    assert resolver.cluster_value([('zz-other', {'high_utilization': '10'})],
                                  'high_utilization', 80) == 80


def test_deprecated_name_still_read_with_one_warning(warnings):
    reader = aggregate_keys.Reader()
    for _ in range(5):
        assert reader.value('gold', {'drs_high_utilization_percent': '55'},
                            'high_utilization') == 55.0
    assert warnings.text.count('metadata drs_high_utilization_percent is deprecated, '
                               'set high_utilization instead') == 1
    both = {'drs_high_utilization_percent': '55', 'high_utilization': '65'}
    assert reader.value('silver', both, 'high_utilization') == 65.0
    assert 'high_utilization wins' in warnings.text


@pytest.mark.parametrize('document', ['README.md', 'doc/source/scheduler.md'])
def test_every_key_is_in_the_documented_table(document):
    with open(os.path.join(REPO_ROOT, document)) as handle:
        text = handle.read()
    listed = set(re.findall(r'^\| `([a-z_]+)` \| [^|]', text, re.M))
    for key in aggregate_keys.KEYS.values():
        assert key.name in listed, (document, key.name)
        assert key.overrides in text, (document, key.name)


class TestWeigherAndDaemonShareTheThreshold:
    """One ``high_utilization`` on a cluster's aggregate: the scheduler packs
    up to it and the daemon relieves hosts above it."""

    @pytest.fixture
    def conf(self):
        fixture = config_fixture.Config(drs_conf.CONF)
        fixture.setUp()
        yield drs_conf.CONF
        fixture.cleanUp()

    @pytest.mark.parametrize('key', ['high_utilization', 'drs_high_utilization_percent'])
    def test_same_key_same_threshold(self, conf, key):
        metadata = {'drs_policy': 'power_saving', key: '70'}
        state = host_manager.HostState('h1', 'h1', 'cell1')
        state.aggregates = [objects.Aggregate(id=1, name='c1', metadata=metadata, hosts=[])]
        weigher_threshold = base.high_utilization(state)

        planner = planning.ClusterPlanner(conf, drs.DrsPolicy())
        daemon_threshold = planner._cluster_policy('c1', metadata).overload_now * 100
        even_threshold = planner._even_policy('c1', metadata).high * 100

        assert weigher_threshold == pytest.approx(70.0)
        assert daemon_threshold == pytest.approx(70.0)
        assert even_threshold == pytest.approx(70.0)
