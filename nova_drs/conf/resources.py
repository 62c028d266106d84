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

"""Extensible resource tracking: group ``[drs_resources]``.

Read by nova-compute (the ``cpu.drs`` compute monitor drives the compute
resource plugins) and by nova-scheduler (``ResourceConsumersFilter`` drives
the consumer plugins). Both lists default to empty: nothing changes unless an
operator names plugins.
"""

from oslo_config import cfg

resources_group = cfg.OptGroup(
    'drs_resources', title='nova-drs resource tracking plugins',
    help='Compute resource plugins (run by the nova-drs compute monitor, '
         '[DEFAULT] compute_monitors = cpu.drs) and scheduler consumer plugins '
         '(run by the nova_drs.resources.scheduler.ResourceConsumersFilter).')

resources_opts = [
    cfg.ListOpt('compute_resources',
                default=[],
                item_type=cfg.types.String(),
                help='Compute resource plugins nova-compute runs every resource '
                     'tracker period: entry point names of namespace '
                     'nova_drs.compute.resources (built in: host_load, '
                     'instance_stats, compute_units, wake_address) or '
                     '"package.module:Class" paths of out-of-tree plugins. Their '
                     'reports go into the compute node stats and the statistics '
                     'samples.'),
    cfg.ListOpt('scheduler_consumers',
                default=[],
                item_type=cfg.types.String(),
                help='Scheduler consumer plugins the ResourceConsumersFilter runs: '
                     'entry point names of namespace nova_drs.scheduler.consumers '
                     '(built in: host_load, compute_units) or "package.module:Class" '
                     'paths. They read the compute node stats into the host state '
                     'and account for instances the scheduler places.'),
    cfg.IntOpt('compute_units',
               default=0,
               min=0,
               help='Capacity of this compute host in compute units (cu), the '
                    'CPU performance measure flavors request with the extra spec '
                    '"drs:cu". 0 means vCPUs of the host multiplied by '
                    'compute_units_per_cpu.'),
    cfg.IntOpt('compute_units_per_cpu',
               default=10,
               min=1,
               help='Compute units one physical CPU of this host provides, used '
                    'when compute_units is 0.'),
    cfg.IntOpt('error_log_interval',
               default=60,
               min=1,
               help='Seconds between two error log lines for the same failing '
                    'scheduler consumer plugin (the compute side logs once per '
                    'resource tracker period).'),
]


def list_opts():
    return [(resources_group, resources_opts)]
