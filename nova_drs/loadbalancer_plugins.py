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

"""Build decision-core objects from ``[loadbalancer]`` options.

The core takes algorithm objects; this module is the only place that maps
configured names to classes, through stevedore entry points, so operators
can ship their own algorithms in a separate package.
"""

from importlib import metadata

import jsonschema
from stevedore import driver
from stevedore import exception as stevedore_exception

from nova_drs import exception
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import policy as policy_mod

NAMESPACE = 'nova_drs.loadbalancer.'
# Entry point kind -> the [loadbalancer] option that names a plugin of it.
OPTIONS = {'policy': 'policy', 'overload': 'overload_detector',
           'vm_selection': 'vm_selection', 'placement': 'placement',
           'underload': 'underload_detector'}


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


def build(cls, values, source):
    """``cls(**values)`` once ``values`` satisfy ``cls.PARAMETERS``; ConfigError
    naming ``source`` (where the values came from) and the schema's rule."""
    schema = getattr(cls, 'PARAMETERS', None) or {'type': 'object'}
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft7Validator(schema).iter_errors(values))
    if error is not None:
        where = '.'.join(str(p) for p in error.absolute_path) or 'parameters'
        raise exception.ConfigError('%s: %s %s' % (source, where, error.message))
    return cls(**values)


def load_policy(conf):
    opts = conf.loadbalancer
    cls = plugin('policy', opts.policy)
    source = '[loadbalancer] policy = %s' % opts.policy
    if opts.policy == 'drs':
        return build(cls, {
            'window': opts.history_window, 'quantile': opts.history_quantile,
            'overload_now': opts.overload_cpu, 'overload_predicted': opts.overload_predicted,
            'place_now': opts.place_cpu, 'place_predicted': opts.place_predicted,
            'underload': opts.underload_predicted,
            'cooldown': float(opts.migration_cooldown)}, source)
    if opts.policy == 'even_distribution':
        return build(cls, {'cooldown': float(opts.migration_cooldown)}, source)
    detector = _detector(opts)
    selection = build(plugin('vm_selection', opts.vm_selection), {}, source)
    placement = plugin('placement', opts.placement)(detector)
    underload_cls = plugin('underload', opts.underload_detector)
    if opts.underload_detector == 'mean_threshold':
        underload = build(underload_cls, {'cpu': opts.underload_cpu,
                                          'memory': opts.underload_memory}, source)
    else:
        underload = build(underload_cls, {}, source)
    wake = (build(policy_mod.UnsuspendWhenHot, {'cpu': opts.unsuspend_cpu,
                                                'memory': opts.unsuspend_memory}, source)
            if opts.unsuspend_when_hot else None)
    return cls(detector, selection, placement, underload, wake)


def _detector(opts):
    """``overload_param`` is the one parameter of the CloudSim detectors."""
    cls = plugin('overload', opts.overload_detector)
    properties = getattr(cls, 'PARAMETERS', {}).get('properties')
    if properties is None:          # a plugin that declares no schema
        return cls(opts.overload_param)
    values = {next(iter(properties)): opts.overload_param} if properties else {}
    return build(cls, values, '[loadbalancer] overload_param')


def load_limits(conf):
    return model.SafetyLimits(conf.loadbalancer.min_active_hosts,
                              conf.loadbalancer.hosts_in_reserve)
