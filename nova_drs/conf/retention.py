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

"""How long the DRS database keeps its history: group ``[drs_retention]``.

Statistics (``[drs_stats] retention``), decisions (``[loadbalancer]
decision_retention``) and power readings (``[drs_energy] reading_retention``)
keep their options where they were; this group holds the others. The
daemon purges at most ``purge_interval`` apart, ``nova-drs-manage db purge``
on demand, both in batches of ``purge_batch_size`` rows so a large backlog
never holds a table lock for long.
"""

from oslo_config import cfg

from nova_drs import exception

HOUR = 3600

retention_group = cfg.OptGroup(
    'drs_retention', title='nova-drs history retention',
    help='How long nova-drs keeps the history tables of its database; '
         'older rows are deleted by nova-loadbalancer and by '
         '"nova-drs-manage db purge".')

retention_opts = [
    cfg.IntOpt('migrations',
               default=24 * 30, min=1, max=24 * 3660,
               help='Hours finished migrations (table lb_migrations) are kept. '
                    'Migrations still in progress are never deleted. Must '
                    'exceed [loadbalancer] migration_cooldown and '
                    '[drs_oscillation] oscillation_window, which read this '
                    'history (checked at startup).'),
    cfg.IntOpt('state_changes',
               default=24 * 90, min=1, max=24 * 3660,
               help='Hours host state transitions (table drs_host_state_changes, '
                    'read by the energy report and the metrics) are kept. Each '
                    'host keeps its newest older transition, so its state at '
                    'any time within the retention is still known.'),
    cfg.IntOpt('requests',
               default=24 * 30, min=1, max=24 * 3660,
               help='Hours finished administrator requests (wake tests, server '
                    'scales; table lb_requests) are kept after they ended. Open '
                    'requests are never deleted.'),
    cfg.IntOpt('ratio_history',
               default=24 * 366, min=1, max=24 * 3660,
               help='Hours of host allocation-ratio history (table '
                    'host_ratio_history) kept. Each host keeps the ratios in '
                    'force at the cut-off, so an instance launched earlier is '
                    'reconciled at those.'),
    cfg.IntOpt('removed_host_grace',
               default=24, min=1, max=24 * 3660,
               help='Hours nova must have stopped listing a host\'s nova-compute '
                    'service before nova-loadbalancer deletes its DRS record '
                    '(table drs_hosts, with its power settings). Only active '
                    'hosts qualify: a suspended, waking, suspending, error or '
                    'maintenance host keeps its record (and how to wake it), '
                    'whatever nova lists, and a host nova lists again is kept. '
                    'The grace restarts when the daemon restarts.'),
    cfg.IntOpt('purge_interval',
               default=HOUR, min=60,
               help='Seconds between two purges run by nova-loadbalancer at the '
                    'end of a cycle. A purge that leaves rows behind (it deletes '
                    'at most 10 batches per table) continues at the next cycle.'),
    cfg.IntOpt('purge_batch_size',
               default=1000, min=1, max=100000,
               help='Rows deleted per transaction by a purge: each batch locks '
                    'only its own rows, briefly.'),
]


def check(conf):
    """Raise ConfigError when the migration history is shorter than a window read
    from it (the cooldown or the oscillation guard would forget moves)."""
    kept = conf.drs_retention.migrations * HOUR
    for label, seconds in (('[loadbalancer] migration_cooldown',
                            conf.loadbalancer.migration_cooldown),
                           ('[drs_oscillation] oscillation_window',
                            conf.drs_oscillation.oscillation_window)):
        if seconds >= kept:
            raise exception.ConfigError(
                '[drs_retention] migrations (%d h) must exceed %s (%d s): the purge '
                'would delete history it reads' % (conf.drs_retention.migrations,
                                                   label, seconds))


def list_opts():
    return [(retention_group, retention_opts)]
