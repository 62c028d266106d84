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

"""What the history purge deletes, and the daemon's purge step.

One entry per history table: its owner module's ``purge`` and ``purgeable``
(which rows are old is the owner's to say: rows the live logic still needs,
such as open migrations and requests or each host's newest state and ratios
before the cut-off, are never old) and the option giving its retention.
``nova-drs-manage db purge`` and nova-loadbalancer's end-of-cycle purge both
go through ``purge`` here.
"""

import dataclasses
import datetime

from oslo_log import log as logging

from nova_drs.db import decisions
from nova_drs.db import hosts
from nova_drs.db import inventory
from nova_drs.db import lb_migrations
from nova_drs.db import overcommit
from nova_drs.db import plans
from nova_drs.db import power_readings
from nova_drs.db import requests
from nova_drs.db import state_history

LOG = logging.getLogger(__name__)

#: Batches one table may take per daemon purge; the rest waits for the next cycle.
DAEMON_BATCHES = 10


@dataclasses.dataclass(frozen=True)
class Retained:
    """One history table: ``owner``, its module, has ``purge(database, cutoff,
    batch_size, max_batches)`` and ``purgeable(database, cutoff)``; ``hours``
    maps the configuration to the hours its rows are kept."""

    table: object
    owner: object
    hours: object

    @property
    def name(self):
        return self.table.name


RETAINED = (
    Retained(lb_migrations.TABLE, lb_migrations, lambda c: c.drs_retention.migrations),
    Retained(state_history.TABLE, state_history, lambda c: c.drs_retention.state_changes),
    Retained(requests.TABLE, requests, lambda c: c.drs_retention.requests),
    Retained(overcommit.RATIO_HISTORY, overcommit, lambda c: c.drs_retention.ratio_history),
    Retained(decisions.TABLE, decisions, lambda c: c.loadbalancer.decision_retention),
    Retained(power_readings.TABLE, power_readings,
             lambda c: c.drs_energy.reading_retention),
    Retained(inventory.TABLE, inventory, lambda c: c.drs_stats.retention / 3600.0),
)
BY_NAME = {retained.name: retained for retained in RETAINED}
#: Finished plans (``[loadbalancer] plan_retention``, 0 keeps them) go with their actions.
PLANS = plans.TABLE_NAME


def purge_table(database, retained, hours, now, batch_size, max_batches=None, dry_run=False):
    """(rows deleted or, dry run, that would be, done?) for one table."""
    cutoff = now - datetime.timedelta(hours=hours)
    if dry_run:
        return retained.owner.purgeable(database, cutoff), True
    return retained.owner.purge(database, cutoff, batch_size, max_batches)


def purge(database, conf, now, dry_run=False, max_batches=None, names=None):
    """{table: (rows, done?)} for every retained table (or those ``names``)."""
    batch_size = conf.drs_retention.purge_batch_size
    return {retained.name: purge_table(database, retained, retained.hours(conf), now,
                                       batch_size, max_batches, dry_run)
            for retained in RETAINED if names is None or retained.name in names}


def purge_plans(database, older_than, dry_run=False):
    """Finished plans last changed before ``older_than`` deleted (with their
    actions) or, dry run, that would be."""
    if dry_run:
        return plans.purgeable(database, older_than)
    return plans.purge(database, older_than)


class RemovedHosts:
    """Which DRS records belong to computes nova stopped listing, and since when.

    Kept in memory: a restarted daemon (or a new leader) starts the grace
    again, which only ever delays a deletion.
    """

    def __init__(self):
        self.missing_since = {}

    def expired(self, states, listed, now, grace):
        """Hosts of ``states`` ({host: DRS state}) missing from ``listed`` for at
        least ``grace``. A sleeping host nova forgot is logged (once), and kept."""
        if not listed:  # an empty listing is a fault, never "every host is gone"
            return set()
        missing = set(states) - set(listed)
        for host in sorted(missing - set(self.missing_since)):
            self.missing_since[host] = now
            if states[host] == 'active':
                LOG.info('%s: nova no longer lists its nova-compute service; its DRS '
                         'record is deleted if that lasts [drs_retention] '
                         'removed_host_grace', host)
            else:
                LOG.warning('%s: nova no longer lists its nova-compute service but its '
                            'DRS state is %s: its record (and how to wake it) is kept; '
                            'a woken nova-compute registers its service again',
                            host, states[host])
        for host in set(self.missing_since) - missing:
            del self.missing_since[host]
        return {host for host, since in self.missing_since.items() if now - since >= grace}

    def forget(self, hosts):
        for host in hosts:
            self.missing_since.pop(host, None)


class DaemonPurge:
    """The purge nova-loadbalancer runs at the end of a cycle, when it is due."""

    def __init__(self, conf, database):
        self.conf = conf
        self.database = database
        self.removed = RemovedHosts()
        self.next_at = None

    def run(self, listed_hosts, records, now):
        """Purge when due; returns {table: rows deleted} (empty when not due).

        ``listed_hosts``: the hosts of nova's compute services this cycle;
        ``records``: {host: DRS record} the cycle read (no extra query). A
        failure is logged and retried next cycle: history never costs a cycle.
        """
        try:
            return self._run(listed_hosts, records, now)
        except Exception:
            LOG.exception('history purge failed; retried next cycle')
            return {}

    def _run(self, listed_hosts, records, now):
        group = self.conf.drs_retention
        grace = datetime.timedelta(hours=group.removed_host_grace)
        states = {host: record['suspend_state'] for host, record in records.items()}
        expired = self.removed.expired(states, listed_hosts, now, grace)
        if self.next_at is not None and now < self.next_at:
            return {}
        outcome = purge(self.database, self.conf, now, max_batches=DAEMON_BATCHES)
        deleted = {name: rows for name, (rows, _done) in outcome.items() if rows}
        removable = hosts.removable(self.database, expired)
        if removable:
            deleted[hosts.TABLE.name] = hosts.delete_removed(self.database, removable,
                                                          group.purge_batch_size)
            self.removed.forget(removable)
            LOG.info('deleted the DRS records of %s: nova has not listed their '
                     'nova-compute service for %d h', ', '.join(sorted(removable)),
                     group.removed_host_grace)
        backlog = not all(done for _rows, done in outcome.values())
        self.next_at = None if backlog else now + datetime.timedelta(
            seconds=group.purge_interval)
        if deleted:
            LOG.info('history purge: %s%s', ', '.join(
                '%d from %s' % (rows, name) for name, rows in sorted(deleted.items())),
                '; more next cycle' if backlog else '')
        return deleted
