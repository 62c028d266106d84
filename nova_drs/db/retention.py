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

"""Retention of the history tables: what is old, and deleting it in batches.

Every purge deletes by primary key, ``batch_size`` rows per transaction,
oldest ids first: a backlog of millions of rows is worked off in many short
transactions, never one DELETE that locks the table for minutes. Rows the
live logic still needs are never old: open migrations and requests, and the
newest row before the cut-off of each host in the tables that say what a
host's state or ratios were at a given time.
"""

import dataclasses
import datetime
import logging

import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import plans

LOG = logging.getLogger(__name__)

MIGRATIONS = models.LbMigration.__table__
STATE_CHANGES = models.DrsHostStateChange.__table__
REQUESTS = models.LbRequest.__table__
RATIO_HISTORY = models.HostRatioHistory.__table__
DECISIONS = models.LbDecision.__table__
POWER_READINGS = models.DrsPowerReading.__table__
CYCLE_INVENTORY = models.DrsCycleInventory.__table__
HOSTS = models.DrsHost.__table__

#: Batches one table may take per daemon purge; the rest waits for the next cycle.
DAEMON_BATCHES = 10


def delete_in_batches(database, table, condition, batch_size, max_batches=None, keep=()):
    """Delete the rows of ``table`` matching ``condition``, oldest ids first.

    Each batch is its own transaction (select ``batch_size`` ids, delete
    them). ``keep``: ids never deleted. Returns (rows deleted, done?): done
    is False when ``max_batches`` ran out before the last matching row.
    """
    if keep:
        condition = sa.and_(condition, table.c.id.not_in(sorted(keep)))
    deleted = batches = 0
    while max_batches is None or batches < max_batches:
        with database.writer() as session:
            ids = session.scalars(sa.select(table.c.id).where(condition)
                                  .order_by(table.c.id).limit(batch_size)).all()
            if ids:
                deleted += session.execute(table.delete().where(table.c.id.in_(ids))).rowcount
        batches += 1
        if len(ids) < batch_size:
            return deleted, True
    return deleted, False


def count(database, table, condition, keep=()):
    """Rows ``delete_in_batches`` would delete (for a dry run)."""
    if keep:
        condition = sa.and_(condition, table.c.id.not_in(sorted(keep)))
    with database.reader() as session:
        return session.execute(sa.select(sa.func.count()).select_from(table)
                               .where(condition)).scalar()


def newest_before(database, table, time_column, cutoff):
    """Ids of each host's newest row older than ``cutoff`` (one grouped query)."""
    column = table.c[time_column]
    newest = (sa.select(table.c.host, sa.func.max(column).label('newest'))
              .where(column < cutoff).group_by(table.c.host).subquery())
    query = (sa.select(sa.func.max(table.c.id))
             .join(newest, sa.and_(table.c.host == newest.c.host, column == newest.c.newest))
             .group_by(table.c.host))
    with database.reader() as session:
        return set(session.scalars(query))


@dataclasses.dataclass(frozen=True)
class Policy:
    """One table's retention: which rows are old once ``hours`` have passed."""

    name: str
    table: sa.Table
    time_column: str
    hours: object             # conf -> hours kept
    still_needed: object = None   # extra condition: rows never deleted
    keep_newest_per_host: bool = False

    def condition(self, cutoff):
        old = self.table.c[self.time_column] < cutoff
        return old if self.still_needed is None else sa.and_(old, sa.not_(self.still_needed))


POLICIES = (
    Policy('lb_migrations', MIGRATIONS, 'created_at', lambda c: c.drs_retention.migrations,
           still_needed=MIGRATIONS.c.status == 'requested'),
    Policy('drs_host_state_changes', STATE_CHANGES, 'changed_at',
           lambda c: c.drs_retention.state_changes, keep_newest_per_host=True),
    Policy('lb_requests', REQUESTS, 'finished_at', lambda c: c.drs_retention.requests,
           still_needed=REQUESTS.c.status.in_(('pending', 'running'))),
    Policy('host_ratio_history', RATIO_HISTORY, 'since',
           lambda c: c.drs_retention.ratio_history, keep_newest_per_host=True),
    Policy('lb_decisions', DECISIONS, 'cycle_at',
           lambda c: c.loadbalancer.decision_retention),
    Policy('drs_power_readings', POWER_READINGS, 'read_at',
           lambda c: c.drs_energy.reading_retention),
    Policy('drs_cycle_inventory', CYCLE_INVENTORY, 'taken_at',
           lambda c: c.drs_stats.retention / 3600.0),
)
BY_NAME = {policy.name: policy for policy in POLICIES}


def purge_table(database, policy, hours, now, batch_size, max_batches=None, dry_run=False):
    """(rows deleted or, dry run, that would be, done?) for one policy."""
    cutoff = now - datetime.timedelta(hours=hours)
    keep = (newest_before(database, policy.table, policy.time_column, cutoff)
            if policy.keep_newest_per_host else ())
    condition = policy.condition(cutoff)
    if dry_run:
        return count(database, policy.table, condition, keep), True
    return delete_in_batches(database, policy.table, condition, batch_size,
                             max_batches, keep)


def purge(database, conf, now, dry_run=False, max_batches=None, names=None):
    """{table: (rows, done?)} for every policy (or those ``names``)."""
    batch_size = conf.drs_retention.purge_batch_size
    return {policy.name: purge_table(database, policy, policy.hours(conf), now, batch_size,
                                     max_batches, dry_run)
            for policy in POLICIES if names is None or policy.name in names}


def purge_plans(database, older_than, dry_run=False):
    """Finished plans last changed before ``older_than`` that ``plans.purge``
    deletes (with their actions), or, dry run, counts."""
    if not dry_run:
        return plans.purge(database, older_than)
    table = models.LbPlan.__table__
    changed = sa.func.coalesce(table.c.updated_at, table.c.created_at)
    return count(database, table, sa.and_(table.c.status.in_(plans.FINISHED),
                                          changed < older_than))


# --- DRS records of computes nova no longer lists ---------------------------

def removable_hosts(database, hosts):
    """Those of ``hosts`` whose record is active and idle: no power command in
    flight, nova-compute not disabled by nova-drs (a host it may still have to
    re-enable)."""
    if not hosts:
        return set()
    with database.reader() as session:
        return set(session.scalars(sa.select(HOSTS.c.host).where(
            HOSTS.c.host.in_(sorted(hosts)), *_idle_active())))


def _idle_active():
    return (HOSTS.c.suspend_state == 'active', HOSTS.c.power_requested_at.is_(None),
            HOSTS.c.disabled_by_drs == sa.false())


def delete_hosts(database, hosts, batch_size):
    """Delete the records of ``hosts`` that are still active and idle; rows deleted.

    The state is re-checked in the DELETE itself, so a host an admin or a
    daemon moved meanwhile (e.g. started suspending) is kept.
    """
    hosts, deleted = sorted(hosts), 0
    for start in range(0, len(hosts), batch_size):
        with database.writer() as session:
            deleted += session.execute(HOSTS.delete().where(
                HOSTS.c.host.in_(hosts[start:start + batch_size]), *_idle_active())).rowcount
    return deleted


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
        removable = removable_hosts(self.database, expired)
        if removable:
            deleted['drs_hosts'] = delete_hosts(self.database, removable,
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
