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

"""Decision-core options: algorithm choice and parameters, in the daemon's
group ``[loadbalancer]`` (``loadbalancer.py`` owns the group).

An option that sets an algorithm parameter is generated from that
parameter's JSON schema in the core (``PARAMETERS``), so its type, default,
bounds and help are written once, there; ``PARAMETER_OPTIONS`` keeps the
option names operators already use.
"""

from oslo_config import cfg

from nova_drs.conf import loadbalancer
from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import overload
from nova_drs.loadbalancer import policy
from nova_drs.loadbalancer import underload

#: option -> (the algorithm's name, its class, the parameter), the first of
#: several giving the option's type, default, bounds and help: the daemon
#: builds those algorithms with the option's value (loadbalancer_plugins).
PARAMETER_OPTIONS = {
    'history_window': (('drs', drs.DrsPolicy, 'window'),),
    'history_quantile': (('drs', drs.DrsPolicy, 'quantile'),),
    'overload_cpu': (('drs', drs.DrsPolicy, 'overload_now'),),
    'overload_predicted': (('drs', drs.DrsPolicy, 'overload_predicted'),),
    'place_cpu': (('drs', drs.DrsPolicy, 'place_now'),),
    'place_predicted': (('drs', drs.DrsPolicy, 'place_predicted'),),
    'underload_predicted': (('drs', drs.DrsPolicy, 'underload'),),
    'underload_cpu': (('mean_threshold', underload.MeanBelowThreshold, 'cpu'),),
    'underload_memory': (('mean_threshold', underload.MeanBelowThreshold, 'memory'),),
    'unsuspend_cpu': (('unsuspend_when_hot', policy.UnsuspendWhenHot, 'cpu'),),
    'unsuspend_memory': (('unsuspend_when_hot', policy.UnsuspendWhenHot, 'memory'),),
    'migration_cooldown': (('drs', drs.DrsPolicy, 'cooldown'),
                           ('even_distribution', even.EvenDistributionPolicy, 'cooldown')),
}
#: What a generated option has besides its parameter's schema.
_EXTRAS = {
    'migration_cooldown': dict(
        opt=cfg.IntOpt, deprecated_name='instance_cooldown',
        help='Seconds after a migration of a server (live or cold, by the '
             'daemon, an admin or anyone else: nova\'s own migration records '
             'count) during which the daemon does not move it again: no '
             'ping-pong. The drs policy still relieves a host over capacity; '
             'the daemon also refuses moves it requested (or failed) within '
             'this time. Formerly instance_cooldown (still read).'),
}
_OPTS = {'integer': cfg.IntOpt, 'number': cfg.FloatOpt}
# The default overload detector, whose parameter is overload_param's default.
_DETECTOR = ('thr', overload.StaticThreshold)
_DETECTORS = (('iqr', overload.InterQuartileRange), ('mad', overload.MedianAbsoluteDeviation),
              ('lr/lrr', overload.LocalRegression))


def parameter_opt(option, targets, opt=None, help=None, **extra):
    """The option ``option`` from the schema of the first of ``targets``."""
    name, cls, parameter = targets[0]
    spec = cls.PARAMETERS['properties'][parameter]
    opt = opt or _OPTS[spec['type']]
    cast = int if opt is cfg.IntOpt else float
    bounds = {bound: cast(spec[key]) for bound, key in (('min', 'minimum'), ('max', 'maximum'))
              if key in spec}
    help = help or '%s %s: %s (%s).' % (name, parameter, spec['description'], spec['unit'])
    return opt(option, default=cast(spec['default']), help=help, **bounds, **extra)


def _first_parameter(cls):
    name, spec = next(iter(cls.PARAMETERS['properties'].items()))
    return name, spec['default']


def _overload_param():
    """One option for whichever detector is chosen: the default detector's
    default, bounds wide enough for every detector's parameter."""
    name, default = _first_parameter(_DETECTOR[1])
    others = ', '.join('the %s for %s (%s)' % (_first_parameter(cls)[0], label,
                                               _first_parameter(cls)[1])
                       for label, cls in _DETECTORS)
    return cfg.FloatOpt('overload_param', default=default, min=0.0, max=10.0,
                        help='Parameter of the overload detector: the %s for %s (%s), %s.'
                             % (name, _DETECTOR[0], default, others))


decision_opts = [
    cfg.StrOpt('policy', default='drs',
               help='Decision policy, a name in the nova_drs.loadbalancer.policy entry '
                    'point namespace. "drs" is the nova-drs default (prediction, '
                    'hysteresis, migration cost, cooldown); "consolidation" composes the '
                    'overload_detector, vm_selection, placement and underload_detector '
                    'options below as in Beloglazov & Buyya / CloudSim.'),
    cfg.StrOpt('overload_detector', default='thr',
               help='Overload detector for the "consolidation" policy (namespace '
                    'nova_drs.loadbalancer.overload): thr, iqr, mad, lr or lrr.'),
    _overload_param(),
    cfg.StrOpt('vm_selection', default='mmt',
               help='Which instance leaves an overloaded host (namespace '
                    'nova_drs.loadbalancer.vm_selection): mmt (least RAM), mc (maximum '
                    'correlation), rs (random, seeded) or mu (least CPU).'),
    cfg.StrOpt('placement', default='pabfd',
               help='Destination choice (namespace nova_drs.loadbalancer.placement): '
                    'pabfd, power-aware best-fit decreasing.'),
    cfg.StrOpt('underload_detector', default='least_utilised',
               help='Which hosts to try to empty (namespace '
                    'nova_drs.loadbalancer.underload): least_utilised (CloudSim) or '
                    'mean_threshold (underload_cpu / underload_memory).'),
    cfg.BoolOpt('unsuspend_when_hot', default=True,
                help='"consolidation" policy: wake the first suspended host of a cluster '
                     'when a host is overloaded and the cluster mean CPU or RAM use is '
                     'above unsuspend_cpu / unsuspend_memory.'),
    cfg.IntOpt('min_active_hosts', default=1, min=0,
               help='Never suspend hosts below this many active hosts per cluster.'),
    cfg.IntOpt('hosts_in_reserve', default=0, min=0,
               help='Extra active hosts kept on top of min_active_hosts for sudden load.'),
    cfg.IntOpt('selection_seed', default=0, min=0,
               help='Seed of the random generator used by random VM selection (rs).'),
] + [parameter_opt(option, targets, **_EXTRAS.get(option, {}))
     for option, targets in PARAMETER_OPTIONS.items()]

# nova-loadbalancer re-reads these on SIGHUP and builds its next cycle from
# them (nova_drs/daemon/launcher.py).
for _opt in decision_opts:
    _opt.mutable = True


def list_opts():
    return [(loadbalancer.loadbalancer_group, decision_opts)]
