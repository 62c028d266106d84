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

"""Every installed algorithm declares its parameters as a JSON schema that
matches its constructor: names, defaults; and the builder enforces it."""

import dataclasses
import importlib.metadata
import inspect

import jsonschema
import pytest

from nova_drs import exception
from nova_drs import loadbalancer_plugins
from nova_drs.loadbalancer import policy as policy_mod

KINDS = ('overload', 'underload', 'vm_selection', 'placement', 'policy')
# Constructor arguments that are other algorithms, not parameters.
COMPONENTS = {'overload', 'vm_selection', 'placement', 'underload', 'wake_rule', 'fallback'}
ALGORITHMS = sorted({(kind, ep.name, ep.load()) for kind in KINDS
                     for ep in importlib.metadata.entry_points(
                         group='nova_drs.loadbalancer.%s' % kind)},
                    key=lambda item: item[:2]) + [('rule', 'unsuspend_when_hot',
                                                   policy_mod.UnsuspendWhenHot)]


def _is_component(name, parameter):
    return name in COMPONENTS and not isinstance(parameter.default, (int, float))


def _constructor_parameters(cls):
    if cls.__init__ is object.__init__:
        return {}
    signature = inspect.signature(cls.__init__)
    return {name: p.default for name, p in signature.parameters.items()
            if name != 'self' and not _is_component(name, p)}


@pytest.mark.parametrize('kind,name,cls', ALGORITHMS, ids=lambda v: getattr(v, '__name__', v))
def test_schema_is_valid_and_matches_the_constructor(kind, name, cls):
    schema = getattr(cls, 'PARAMETERS', None)
    assert schema is not None, '%s %s declares no PARAMETERS' % (kind, name)
    jsonschema.Draft7Validator.check_schema(schema)
    properties = schema['properties']
    expected = _constructor_parameters(cls)
    assert set(properties) == set(expected), (kind, name)
    for parameter, default in expected.items():
        assert properties[parameter]['default'] == default, (name, parameter)
        assert properties[parameter]['unit'] and properties[parameter]['description']
    defaults = {p: v['default'] for p, v in properties.items()}
    jsonschema.validate(defaults, schema)          # the defaults obey the schema
    cls(**({c: None for c in _components(cls)} | defaults))


def _components(cls):
    if cls.__init__ is object.__init__:
        return set()
    return {n for n, p in inspect.signature(cls.__init__).parameters.items()
            if _is_component(n, p) and p.default is inspect.Parameter.empty}


def test_builder_refuses_values_outside_the_schema_with_one_line():
    with pytest.raises(exception.ConfigError) as error:
        loadbalancer_plugins.build('policy', 'drs', {'window': 0}, 'source')
    assert str(error.value).startswith('source: window 0 is less than the minimum of 1')
    with pytest.raises(exception.ConfigError, match='source: parameters Additional'):
        loadbalancer_plugins.build('policy', 'drs', {'nosuch': 1}, 'source')
    assert loadbalancer_plugins.build('policy', 'drs', {'window': 6}, 'source').window == 6
    with pytest.raises(exception.ConfigError,
                       match=r'^\[loadbalancer\] policy = drs: window 31 is greater'):
        loadbalancer_plugins.build('policy', 'drs', {'window': 31})


def test_the_loader_fills_the_schemas_defaults_and_leaves_the_overrides_alone():
    overrides = {'window': 6}
    values = loadbalancer_plugins.parameters(policy_mod.UnsuspendWhenHot)
    assert values == {'cpu': 0.8, 'memory': 0.8}
    drs = loadbalancer_plugins.build('policy', 'drs', overrides)
    assert overrides == {'window': 6}
    assert (drs.window, drs.quantile, drs.cooldown) == (6, 0.8, 3600.0)
    even = loadbalancer_plugins.build('policy', 'even_distribution', {'high': 0.7})
    assert (even.high, even.max_migrations) == (0.7, None)
    assert loadbalancer_plugins.build('rule', 'unsuspend_when_hot', {'cpu': 0.5}).cpu == 0.5


def test_rebuild_keeps_the_other_parameters_and_checks_the_new_ones():
    tuned = loadbalancer_plugins.build('policy', 'drs', {'quantile': 0.9})
    copy = loadbalancer_plugins.rebuild(tuned, {'window': 3}, 'cluster c')
    assert (copy.window, copy.quantile, tuned.window) == (3, 0.9, 12)
    with pytest.raises(exception.ConfigError, match='^cluster c: overload_now 0.05 is less'):
        loadbalancer_plugins.rebuild(tuned, {'overload_now': 0.05}, 'cluster c')


def test_the_simulators_names_go_through_the_loader():
    assert loadbalancer_plugins.by_name('drs', {'window': 4}).window == 4
    with pytest.raises(ValueError, match='bad drs parameter: drs parameters: window 0'):
        loadbalancer_plugins.by_name('drs', {'window': 0})
    with pytest.raises(ValueError, match='policy thr_mmt_1.5: threshold 1.5 is greater'):
        loadbalancer_plugins.by_name('thr_mmt_1.5')
    assert loadbalancer_plugins.by_name('lr_mmt_1.2').overload.safety == 1.2
    with pytest.raises(ValueError, match='unknown policy'):
        loadbalancer_plugins.by_name('nosuch')


def test_an_algorithms_fields_are_its_parameters():
    from nova_drs.loadbalancer import overload
    from nova_drs.loadbalancer import schema as core_schema

    assert [f.name for f in dataclasses.fields(overload.LocalRegression)] == [
        'safety', 'migration_intervals']
    # A subclass that redeclares a parameter takes its own default.
    assert overload.MedianAbsoluteDeviation().safety == 2.5
    assert overload.InterQuartileRange().safety == 1.5
    assert overload.MedianAbsoluteDeviation(safety=3).safety == 3

    @core_schema.algorithm
    class Probe:
        PARAMETERS = core_schema.params(
            limit=core_schema.integer(None, 'a cap', 'items', nullable=True))

    assert Probe().limit is None and Probe(limit=4).limit == 4
    assert Probe.__annotations__ == {'limit': int | None}
    one, other = Probe(), Probe()
    assert one != other and len({one, other}) == 2   # identity, as before
