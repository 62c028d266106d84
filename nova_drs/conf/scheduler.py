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

"""Scheduler plugin options: group ``[drs_scheduler]``.

Read by the filters and weighers that run inside nova-scheduler, and by
``nova-drs-manage overcommit``. Every weigher multiplier can be overridden
per aggregate with aggregate metadata of the same name.
"""

from oslo_config import cfg

scheduler_group = cfg.OptGroup(
    'drs_scheduler', title='nova-drs scheduler plugins',
    help='Options of the nova-drs filters (SuspendStateFilter, '
         'OvercommitCoreFilter, OvercommitRamFilter) and weighers.')

scheduler_opts = [
    cfg.IntOpt('state_cache_ttl',
               default=300, min=0, max=86400,
               help='Seconds SuspendStateFilter keeps using the last host '
                    'states it read when the DRS database becomes '
                    'unreachable: hosts last known as non-active stay '
                    'excluded. After that, hosts pass this filter and only '
                    'the disabled nova-compute service (set by the nova-drs '
                    'daemon when it suspends a host) keeps them out. 0 '
                    'disables the cache.'),
    cfg.IntOpt('cache_seconds',
               default=5, min=0, max=300,
               help='Seconds the overcommit filters and DRS weighers reuse the '
                    'deployed-with ratios and the in-progress migrations they '
                    'read, across scheduling requests (0: read them for every '
                    'request). Nova\'s own usage figures are always current, '
                    'so staleness only delays the scaling of instances '
                    'recorded within that time. SuspendStateFilter always '
                    'reads the host states for every request.'),
    cfg.FloatOpt('high_utilization_percent',
                 default=80.0, min=1.0, max=100.0,
                 help='Power-saving weigher: a host whose CPU or RAM '
                      'allocation (per-aggregate ratios) would exceed this '
                      'percentage after placing the instance is the least '
                      'preferred. Aggregate metadata "high_utilization" of the '
                      'host\'s DRS cluster overrides it (the mark above which the '
                      'daemon relieves hosts, too); "drs_high_utilization_percent" '
                      'is its deprecated name.'),
    cfg.FloatOpt('power_saving_weight_multiplier',
                 default=1.0, min=0.0,
                 help='Multiplier of the power-saving (packing) weigher; it '
                      'only acts on hosts whose policy is power_saving. '
                      'Aggregate metadata "drs_power_saving_weight_multiplier" '
                      'overrides it.'),
    cfg.FloatOpt('even_distribution_weight_multiplier',
                 default=1.0, min=0.0,
                 help='Multiplier of the even-distribution weigher (prefers '
                      'the host with the lowest measured CPU/RAM load); it '
                      'only acts on hosts whose policy is even_distribution. '
                      'Aggregate metadata '
                      '"drs_even_distribution_weight_multiplier" overrides it.'),
    cfg.FloatOpt('migration_weight_multiplier',
                 default=1.0, min=0.0,
                 help='Multiplier of the weigher that avoids hosts that are '
                      'the source or destination of migrations in progress. '
                      'Aggregate metadata "drs_migration_weight_multiplier" '
                      'overrides it.'),
]


def list_opts():
    return [(scheduler_group, scheduler_opts)]
