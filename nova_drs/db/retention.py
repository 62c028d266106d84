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
