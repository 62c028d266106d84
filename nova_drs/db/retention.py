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

"""Retention of the history tables: deleting old rows in batches, whatever the table.

Each table's own module (``lb_migrations.purge``, ``state_history.purge``, ...)
says which of its rows are old and calls these helpers; what is purged when
is ``nova_drs.daemon.history_purge``'s (the daemon's step and ``nova-drs-manage
db purge``).

Every purge deletes by primary key, ``batch_size`` rows per transaction,
oldest ids first: a backlog of millions of rows is worked off in many short
transactions, never one DELETE that locks the table for minutes.
"""

import sqlalchemy as sa


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


class NewestKept:
    """The purge of a per-host history whose rows say what held from their time
    on (a host's state, its ratios): rows before the cut-off go but each host's
    newest one, which says what held at the cut-off. ``purge`` and
    ``purgeable`` have the signatures history_purge.Retained asks of a table's
    module, which binds them as its own."""

    def __init__(self, table, time_column):
        self.table = table
        self.time_column = time_column

    def _purged(self, database, cutoff):
        """(condition, ids kept) of the rows ``purge`` deletes."""
        keep = newest_before(database, self.table, self.time_column, cutoff)
        return self.table.c[self.time_column] < cutoff, keep

    def purgeable(self, database, cutoff):
        """How many rows ``purge`` would delete (``db purge --dry-run``)."""
        condition, keep = self._purged(database, cutoff)
        return count(database, self.table, condition, keep)

    def purge(self, database, cutoff, batch_size, max_batches=None):
        """Delete the rows ``_purged`` selects; (rows, done?)."""
        condition, keep = self._purged(database, cutoff)
        return delete_in_batches(database, self.table, condition, batch_size, max_batches,
                                 keep)
