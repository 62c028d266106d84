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

"""The core stays pure; plugins and options wire it to the outside."""

import ast
import pathlib

from oslo_config import cfg
import pytest

from nova_drs import loadbalancer_plugins
from nova_drs.conf import decision
from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import overload
from nova_drs.loadbalancer import policy

CORE = pathlib.Path(__file__).parents[3] / 'nova_drs' / 'loadbalancer'
ALLOWED = {'bisect', 'dataclasses', 'enum', 'gc', 'heapq', 'itertools', 'math', 'random',
           'statistics', 'nova_drs'}


@pytest.mark.parametrize('path', sorted(CORE.glob('*.py')), ids=lambda p: p.name)
def test_core_imports_only_stdlib_and_itself(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or '']
        else:
            continue
        for name in names:
            assert name.split('.')[0] in ALLOWED, '%s imports %s' % (path.name, name)
            if name.startswith('nova_drs'):
                assert name.startswith('nova_drs.loadbalancer'), name


def conf(**overrides):
    c = cfg.ConfigOpts()
    [(group, opts)] = decision.list_opts()
    c.register_opts(opts, group=group)
    c([])
    for key, value in overrides.items():
        c.set_override(key, value, 'loadbalancer')
    return c


def test_default_policy_comes_from_entry_points():
    built = loadbalancer_plugins.load_policy(conf())
    assert isinstance(built, drs.DrsPolicy)
    assert built.quantile == 0.8


def test_even_distribution_loads_from_its_entry_point():
    built = loadbalancer_plugins.load_policy(conf(policy='even_distribution',
                                                  migration_cooldown=60))
    assert isinstance(built, even.EvenDistributionPolicy)
    assert built.cooldown == 60


def test_consolidation_policy_is_composed_from_options():
    built = loadbalancer_plugins.load_policy(conf(policy='consolidation',
                                                  overload_detector='lr', overload_param=1.2))
    assert isinstance(built, policy.ConsolidationPolicy)
    assert isinstance(built.overload, overload.LocalRegression)
    assert built.overload.safety == 1.2
    assert isinstance(built.wake_rule, policy.UnsuspendWhenHot)


def test_limits_and_option_listing():
    limits = loadbalancer_plugins.load_limits(conf(min_active_hosts=2, hosts_in_reserve=1))
    assert limits.floor == 3
    [(group, opts)] = decision.list_opts()
    assert group.name == 'loadbalancer'
    assert {'policy', 'underload_cpu', 'unsuspend_memory'} <= {o.name for o in opts}
    with pytest.raises(ValueError):
        conf(underload_cpu=1.5)
