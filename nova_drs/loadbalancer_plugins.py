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

"""Build decision-core objects: the one loader of algorithms and parameters.

The core takes algorithm objects; this module is the only place that maps
configured names to classes, through stevedore entry points, so operators
can ship their own algorithms in a separate package. ``build(kind, name,
overrides)`` is how every caller (the daemon's options, a cluster's
aggregate metadata, the simulator, the tests) gets an algorithm: the values
given, the schema's defaults for the rest (Watcher's validating defaults),
checked against the algorithm's ``PARAMETERS``.
"""

from importlib import metadata

import jsonschema
from stevedore import driver
from stevedore import exception as stevedore_exception

from nova_drs import exception
from nova_drs.conf import decision
from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import policy as policy_mod

NAMESPACE = 'nova_drs.loadbalancer.'
# Entry point kind -> the [loadbalancer] option that names a plugin of it.
OPTIONS = {'policy': 'policy', 'overload': 'overload_detector',
           'vm_selection': 'vm_selection', 'placement': 'placement',
           'underload': 'underload_detector'}
#: Algorithms that are no plugins: the consolidation policy's wake rule.
RULES = {'unsuspend_when_hot': policy_mod.UnsuspendWhenHot}


def _raise(_manager, _entry_point, exc):
    raise exc


def available(kind):
    return sorted({ep.name for ep in metadata.entry_points(group=NAMESPACE + kind)})


def plugin(kind, name):
    """Class registered as ``name`` in ``nova_drs.loadbalancer.<kind>``;
    ConfigError naming the option when it is unknown or cannot be imported."""
    option = '[loadbalancer] %s = %s' % (OPTIONS[kind], name)
    try:
        manager = driver.DriverManager(NAMESPACE + kind, name, invoke_on_load=False,
                                       on_load_failure_callback=_raise,
                                       warn_on_missing_entrypoint=False)
    except stevedore_exception.NoMatches:
        raise exception.ConfigError('%s: unknown name; available: %s'
                                    % (option, ', '.join(available(kind)))) from None
    except Exception as exc:  # the plugin's own import failed
        raise exception.ConfigError('%s: cannot load the plugin: %s: %s'
                                    % (option, type(exc).__name__, exc)) from None
    return manager.driver


def check_names(conf):
    """Every algorithm option names a loadable plugin, whichever policy is
    chosen: a typo under "drs" must not wait for a policy switch to show."""
    for kind, option in OPTIONS.items():
        plugin(kind, getattr(conf.loadbalancer, option))


def _with_defaults(validator_class):
    """``validator_class`` that fills each missing property with its schema
    default while it validates (Watcher's DefaultValidatingDraft4Validator)."""
    validate_properties = validator_class.VALIDATORS['properties']

    def properties_with_defaults(validator, properties, instance, schema):
        if validator.is_type(instance, 'object'):
            for name, spec in properties.items():
                if 'default' in spec:
                    instance.setdefault(name, spec['default'])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class,
                                        {'properties': properties_with_defaults})


DefaultValidatingValidator = _with_defaults(jsonschema.Draft7Validator)


def parameters(cls, overrides=None, source='parameters'):
    """Every parameter of ``cls``: ``overrides`` over the defaults of
    ``cls.PARAMETERS``, validated; ConfigError naming ``source`` (where the
    values came from) and the schema's rule."""
    values = dict(overrides or {})
    schema = getattr(cls, 'PARAMETERS', None) or {'type': 'object'}
    error = jsonschema.exceptions.best_match(
        list(DefaultValidatingValidator(schema).iter_errors(values)))
    if error is not None:
        where = '.'.join(str(p) for p in error.absolute_path) or 'parameters'
        raise exception.ConfigError('%s: %s %s' % (source, where, error.message))
    return values


def build(kind, name, overrides=None, source=None):
    """The algorithm registered as ``name`` in ``nova_drs.loadbalancer.<kind>``
    with ``overrides`` over its defaults; ConfigError naming ``source`` (the
    option choosing it by default) when the name or a value is wrong."""
    cls = RULES[name] if kind == 'rule' else plugin(kind, name)
    source = source or '[loadbalancer] %s = %s' % (OPTIONS.get(kind, kind), name)
    return cls(**parameters(cls, overrides, source))


def rebuild(algorithm, overrides, source):
    """A copy of ``algorithm`` with ``overrides``, through the same checks."""
    cls = type(algorithm)
    current = {name: getattr(algorithm, name) for name in cls.PARAMETERS['properties']}
    return cls(**parameters(cls, current | dict(overrides), source))


def configured(conf, cls):
    """{parameter: value} of the [loadbalancer] options that set ``cls``'s."""
    return {parameter: getattr(conf.loadbalancer, option)
            for option, targets in decision.PARAMETER_OPTIONS.items()
            for _name, owner, parameter in targets if owner is cls}


def load_policy(conf):
    opts = conf.loadbalancer
    source = '[loadbalancer] policy = %s' % opts.policy
    cls = plugin('policy', opts.policy)
    if getattr(cls, 'PARAMETERS', {}).get('properties') or configured(conf, cls):
        return cls(**parameters(cls, configured(conf, cls), source))
    detector = _detector(opts.overload_detector, opts.overload_param)
    selection = build('vm_selection', opts.vm_selection, source=source)
    placement = plugin('placement', opts.placement)(detector)
    underload_cls = plugin('underload', opts.underload_detector)
    underload = underload_cls(**parameters(underload_cls, configured(conf, underload_cls),
                                           source))
    wake = (build('rule', 'unsuspend_when_hot', configured(conf, policy_mod.UnsuspendWhenHot),
                  source) if opts.unsuspend_when_hot else None)
    return cls(detector, selection, placement, underload, wake)


def _detector(name, value, source='[loadbalancer] overload_param'):
    """``overload_param`` is the one parameter of the CloudSim detectors."""
    cls = plugin('overload', name)
    properties = getattr(cls, 'PARAMETERS', {}).get('properties')
    if properties is None:          # a plugin that declares no schema
        return cls(value)
    values = {next(iter(properties)): value} if properties else {}
    return cls(**parameters(cls, values, source))


def by_name(name, params=None):
    """The simulator's policy ``name``: a policy with parameters (drs,
    even_distribution) built with ``params``, or CloudSim's
    ``<detector>_<selection>_<parameter>``; ValueError with the accepted forms."""
    if name in catalog.PARAMETRISED:
        try:
            return build('policy', name, params, source='%s parameters' % name)
        except exception.ConfigError as exc:
            raise ValueError('bad %s parameter: %s' % (name, exc)) from None
    if params:
        raise ValueError('parameters are only accepted by the %s policies'
                         % ' and '.join(catalog.PARAMETRISED))
    policy = catalog.by_name(name)      # the forms and their errors
    detector, _selection, parameter = name.split('_')
    try:
        _detector(detector, float(parameter), source='policy %s' % name)
    except exception.ConfigError as exc:
        raise ValueError(str(exc)) from None
    return policy


def load_limits(conf):
    return model.SafetyLimits(conf.loadbalancer.min_active_hosts,
                              conf.loadbalancer.hosts_in_reserve)
