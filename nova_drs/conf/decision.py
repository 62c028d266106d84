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
group ``[loadbalancer]`` (``loadbalancer.py`` owns the group)."""

from oslo_config import cfg

from nova_drs.conf import loadbalancer

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
    cfg.FloatOpt('overload_param', default=0.8, min=0.0, max=10.0,
                 help='Parameter of the overload detector: the CPU threshold for thr '
                      '(0.8), the safety factor for iqr (1.5), mad (2.5), lr/lrr (1.2).'),
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
    cfg.FloatOpt('underload_cpu', default=0.2, min=0.0, max=1.0,
                 help='mean_threshold: a host whose mean CPU use is below this fraction '
                      'is underloaded.'),
    cfg.FloatOpt('underload_memory', default=0.2, min=0.0, max=1.0,
                 help='mean_threshold: a host whose RAM use is below this fraction is '
                      'underloaded.'),
    cfg.BoolOpt('unsuspend_when_hot', default=True,
                help='"consolidation" policy: wake the first suspended host of a cluster '
                     'when a host is overloaded and the cluster mean CPU or RAM use is '
                     'above unsuspend_cpu / unsuspend_memory.'),
    cfg.FloatOpt('unsuspend_cpu', default=0.8, min=0.0, max=1.0,
                 help='Cluster mean CPU use above which a suspended host is woken.'),
    cfg.FloatOpt('unsuspend_memory', default=0.8, min=0.0, max=1.0,
                 help='Cluster mean RAM use above which a suspended host is woken.'),
    cfg.IntOpt('min_active_hosts', default=1, min=0,
               help='Never suspend hosts below this many active hosts per cluster.'),
    cfg.IntOpt('hosts_in_reserve', default=0, min=0,
               help='Extra active hosts kept on top of min_active_hosts for sudden load.'),
    cfg.IntOpt('selection_seed', default=0, min=0,
               help='Seed of the random generator used by random VM selection (rs).'),
    cfg.IntOpt('history_window', default=12, min=1, max=30,
               help='drs: samples of CPU history used to size an instance.'),
    cfg.FloatOpt('history_quantile', default=0.8, min=0.0, max=1.0,
                 help='drs: an instance is sized by this quantile of its recent CPU use.'),
    cfg.FloatOpt('overload_cpu', default=1.0, min=0.1, max=2.0,
                 help='drs: a host whose current CPU demand exceeds this fraction of its '
                      'capacity is relieved.'),
    cfg.FloatOpt('overload_predicted', default=1.1, min=0.1, max=3.0,
                 help='drs: a host whose predicted demand (sum of instance sizes) '
                      'exceeds this fraction of its capacity is relieved.'),
    cfg.FloatOpt('place_cpu', default=0.9, min=0.1, max=1.0,
                 help='drs: destinations are filled up to this fraction of current CPU.'),
    cfg.FloatOpt('place_predicted', default=1.0, min=0.1, max=3.0,
                 help='drs: destinations are filled up to this fraction of predicted CPU.'),
    cfg.FloatOpt('underload_predicted', default=0.8, min=0.0, max=1.0,
                 help='drs: hosts whose predicted demand is below this fraction are '
                      'emptied when all their instances fit elsewhere.'),
    cfg.IntOpt('migration_cooldown', default=3600, min=0,
               deprecated_name='instance_cooldown',
               help='Seconds after a migration of a server (live or cold, by the '
                    'daemon, an admin or anyone else: nova\'s own migration records '
                    'count) during which the daemon does not move it again: no '
                    'ping-pong. The drs policy still relieves a host over capacity; '
                    'the daemon also refuses moves it requested (or failed) within '
                    'this time. Formerly instance_cooldown (still read).'),
]

# nova-loadbalancer re-reads these on SIGHUP and builds its next cycle from
# them (nova_drs/daemon/launcher.py).
for _opt in decision_opts:
    _opt.mutable = True


def list_opts():
    return [(loadbalancer.loadbalancer_group, decision_opts)]
