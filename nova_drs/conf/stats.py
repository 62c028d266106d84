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

"""Statistics pipeline: group ``[drs_stats]``.

Compute nodes publish samples as oslo.messaging notifications (no database
credentials on computes); ``nova-drs-collector`` stores them in the DRS
database and purges old ones.
"""

from oslo_config import cfg

stats_group = cfg.OptGroup(
    'drs_stats', title='nova-drs statistics pipeline',
    help='How host and instance samples travel from nova-compute to the DRS '
         'database and how long they are kept.')

stats_opts = [
    cfg.BoolOpt('publish',
                default=True,
                help='Whether the nova-drs compute monitor publishes a statistics '
                     'sample every resource tracker period.'),
    cfg.StrOpt('topic',
               default='drs_stats',
               regex=r'^[A-Za-z0-9_.-]+$',
               help='Notification topic samples are published on and '
                    'nova-drs-collector listens to. Uses the notification '
                    'transport ([oslo_messaging_notifications] transport_url, '
                    'else [DEFAULT] transport_url).'),
    cfg.IntOpt('retention',
               default=600,
               min=60,
               help='Seconds samples are kept; older ones are purged by the '
                    'collector and by "nova-drs-manage stats purge". The default '
                    'keeps ten 60-second resource tracker periods.'),
    cfg.IntOpt('purge_interval',
               default=60,
               min=1,
               help='Seconds between two retention purges run by the collector.'),
    cfg.IntOpt('batch_size',
               default=500,
               min=1,
               help='Notifications the collector stores in one database '
                    'transaction.'),
    cfg.IntOpt('batch_timeout',
               default=2,
               min=1,
               help='Seconds the collector waits to fill a batch before storing '
                    'what it has.'),
]


def list_opts():
    return [(stats_group, stats_opts)]
