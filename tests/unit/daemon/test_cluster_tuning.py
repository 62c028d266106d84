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

"""A cluster's aggregate metadata tunes its policy through the one loader:
the configured parameters stay, the cluster's replace theirs, within the
parameters' bounds; the even policy takes its schema's defaults."""

from oslo_config import fixture as config_fixture
import pytest

from nova_drs import conf as drs_conf
from nova_drs import loadbalancer_plugins
from nova_drs.daemon import planning
from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import even


@pytest.fixture
def conf():
    fixture = config_fixture.Config(drs_conf.CONF)
    fixture.setUp()
    yield drs_conf.CONF
    fixture.cleanUp()


def _planner(conf, **options):
    for name, value in options.items():
        conf.set_override(name, value, group='loadbalancer')
    return planning.ClusterPlanner(conf, loadbalancer_plugins.load_policy(conf))


def test_a_drs_cluster_keeps_the_options_it_does_not_override(conf):
    planner = _planner(conf, history_quantile=0.9, place_cpu=0.6, period=60)
    meta = {'drs_policy': 'power_saving', 'high_utilization': '70',
            'low_utilization': '20', 'overcommit_duration': '5'}
    tuned = planner._cluster_policy('c1', meta)
    assert tuned is not planner.policy and isinstance(tuned, drs.DrsPolicy)
    assert (tuned.overload_now, tuned.underload, tuned.window) == (0.7, 0.2, 5)
    assert (tuned.quantile, tuned.place_now) == (0.9, 0.6)    # min(place_cpu, high)
    assert planner.policy.window == 12                        # the daemon's is untouched
    assert planner._cluster_policy('c1', {'drs_policy': 'power_saving'}) is planner.policy


def test_a_drs_cluster_value_beyond_a_bound_counts_as_the_bound(conf):
    planner = _planner(conf, period=60)
    tuned = planner._cluster_policy('c1', {'drs_policy': 'power_saving',
                                           'high_utilization': '5',
                                           'overcommit_duration': '120'})
    window = drs.DrsPolicy.PARAMETERS['properties']['window']['maximum']
    assert (tuned.overload_now, tuned.place_now, tuned.window) == (0.1, 0.1, window)


def test_the_even_policy_takes_its_schema_defaults_and_the_cooldown_option(conf):
    planner = _planner(conf, migration_cooldown=600, period=30)
    policy = planner._even_policy('c1', {})
    defaults = even.EvenDistributionPolicy.PARAMETERS['properties']
    assert (policy.high, policy.tolerance) == (defaults['high']['default'],
                                               defaults['tolerance']['default'])
    assert (policy.cooldown, policy.window) == (600, even.DEFAULT_DURATION_MINUTES * 2)
    tuned = planner._even_policy('c1', {'drs_policy': 'even_distribution',
                                        'balance_tolerance': '25', 'high_utilization': '90'})
    assert (tuned.tolerance, tuned.high) == (0.25, 0.9)


def test_the_daemons_policy_is_built_from_the_generated_options(conf):
    conf.set_override('history_window', 30, group='loadbalancer')
    conf.set_override('migration_cooldown', 10, group='loadbalancer')
    policy = loadbalancer_plugins.load_policy(conf)
    assert (policy.window, policy.cooldown, policy.place_now) == (30, 10, 0.9)
    conf.set_override('policy', 'consolidation', group='loadbalancer')
    conf.set_override('underload_detector', 'mean_threshold', group='loadbalancer')
    conf.set_override('underload_memory', 0.3, group='loadbalancer')
    consolidation = loadbalancer_plugins.load_policy(conf)
    assert (consolidation.underload.cpu, consolidation.underload.memory) == (0.2, 0.3)
    assert consolidation.wake_rule.cpu == 0.8
