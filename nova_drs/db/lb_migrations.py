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

"""Migrations the daemon requested (table ``lb_migrations``)."""


from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import hosts
from nova_drs.db import models
from nova_drs.db import retention

REQUESTED = 'requested'
#: Statuses of a request that left the server where it was.
NOT_MOVED = frozenset(('failed', 'aborted'))


def _as_dict(row):
    return {column.name: getattr(row, column.name) for column in row.__table__.columns}


def request(database, instance_uuid, source, destination, kind, reason):
    """Record a migration before asking nova for it; returns its id."""
    with database.writer() as session:
        row = models.LbMigration(instance_uuid=instance_uuid, source=source,
                                 destination=destination, kind=kind, reason=reason,
                                 status=REQUESTED, created_at=timeutils.utcnow())
        session.add(row)
        session.flush()
        return row.id


def finish(database, migration_id, status):
    with database.writer() as session:
        session.execute(sa.update(models.LbMigration)
                        .where(models.LbMigration.id == migration_id,
                               models.LbMigration.status == REQUESTED)
                        .values(status=status, finished_at=timeutils.utcnow()))


def finish_for_instance(database, instance_uuid, source, status):
    with database.writer() as session:
        session.execute(sa.update(models.LbMigration)
                        .where(models.LbMigration.instance_uuid == instance_uuid,
                               models.LbMigration.source == source,
                               models.LbMigration.status == REQUESTED)
                        .values(status=status, finished_at=timeutils.utcnow()))


def last_request(database, instance_uuid, source=None):
    with database.reader() as session:
        query = sa.select(models.LbMigration).filter_by(instance_uuid=instance_uuid)
        if source is not None:
            query = query.filter_by(source=source)
        row = session.scalars(query.order_by(models.LbMigration.id.desc())).first()
        return _as_dict(row) if row else None


def open_requests(database):
    with database.reader() as session:
        rows = session.scalars(sa.select(models.LbMigration).filter_by(status=REQUESTED))
        return [_as_dict(row) for row in rows]


def request_at(database, host, state, version, instance_uuid, kind, reason):
    """Record an evacuation of ``host`` only while it is still ``state`` at ``version``.

    Check and insert are one transaction (the check takes the host row's
    lock), so a cancel that won first leaves no row and the step sends
    nothing. Returns the request id, or None when the host moved meanwhile.
    """
    with database.writer() as session:
        if not hosts.lock_if_still_at(session, host, state, version):
            return None
        row = models.LbMigration(instance_uuid=instance_uuid, source=host, destination=None,
                                 kind=kind, reason=reason, status=REQUESTED,
                                 created_at=timeutils.utcnow())
        session.add(row)
        session.flush()
        return row.id


def abandoned_evacuations(database, evacuating_states, source=None):
    """Open evacuation rows whose host is no longer being emptied.

    An evacuation row (no destination) stays ``requested`` while its source is
    in one of ``evacuating_states``; once a suspend or maintenance entry is
    abandoned or cancelled the lifecycle closes them. One query per cycle,
    whatever the number of hosts (or only ``source``'s rows).
    """
    query = sa.select(models.LbMigration).where(
        models.LbMigration.status == REQUESTED, models.LbMigration.destination.is_(None),
        models.LbMigration.source.not_in(hosts.in_states(evacuating_states)))
    if source is not None:
        query = query.where(models.LbMigration.source == source)
    with database.reader() as session:
        return [_as_dict(row) for row in session.scalars(query)]


def recent_moves(database, uuids, since):
    """{instance_uuid: migrations requested since ``since``} for ``uuids``."""
    if not uuids:
        return {}
    table = models.LbMigration.__table__
    with database.reader() as session:
        return dict(session.execute(
            sa.select(table.c.instance_uuid, sa.func.count())
            .where(table.c.instance_uuid.in_(sorted(uuids)), table.c.created_at >= since,
                   table.c.status.not_in(sorted(NOT_MOVED)))
            .group_by(table.c.instance_uuid)).all())


def moved_at_least(database, since, moves):
    """{server: its migrations} of the servers with ``moves`` or more requested
    since ``since`` (the oscillation guard's count, ``recent_moves``, for
    every server at once): one grouped query over the window's rows,
    whatever the number of servers."""
    table = models.LbMigration.__table__
    with database.reader() as session:
        return dict(session.execute(
            sa.select(table.c.instance_uuid, sa.func.count())
            .where(table.c.created_at >= since, table.c.status.not_in(sorted(NOT_MOVED)))
            .group_by(table.c.instance_uuid)
            .having(sa.func.count() >= moves)).all())


def requested_since(database, since):
    """[{instance_uuid, source, created_at, moved}] of every move requested from
    ``since`` on (one query, bounded by the moves of one cooldown): what the
    planner's cooldown adds to nova's migration records, which list a move only
    once nova has it. ``moved`` is False for one that failed: the server never
    left, but the orchestrator gives it one try per cooldown (held_back), so
    the planner must not count on moving it either."""
    table = models.LbMigration.__table__
    moved = table.c.status.not_in(sorted(NOT_MOVED))
    with database.reader() as session:
        return [row._asdict() for row in session.execute(
            sa.select(table.c.instance_uuid, table.c.source, table.c.created_at,
                      moved.label('moved')).where(table.c.created_at >= since))]


def held_back(database, uuids, after, failed_since):
    """{instance_uuid} of ``uuids`` not to move now: a move requested after
    ``after`` (the plan being carried out was decided without it), or one that
    failed from ``failed_since`` on (one try per cooldown: nova refused or the
    move broke, and a retry each cycle would only repeat it). From ``after``'s
    whole second on (databases may keep whole seconds): a move of that very
    second counts, the safe side."""
    if not uuids:
        return set()
    table = models.LbMigration.__table__
    with database.reader() as session:
        return set(session.scalars(
            sa.select(table.c.instance_uuid).distinct()
            .where(table.c.instance_uuid.in_(sorted(uuids)),
                   sa.or_(table.c.created_at >= after.replace(microsecond=0),
                          sa.and_(table.c.status.in_(sorted(NOT_MOVED)),
                                  table.c.created_at >= failed_since)))))


def counts_by_reason(database, since):
    """{reason: migrations requested from ``since`` on} (a bounded window)."""
    table = models.LbMigration.__table__
    with database.reader() as session:
        return dict(session.execute(sa.select(table.c.reason, sa.func.count())
                                    .where(table.c.created_at >= since)
                                    .group_by(table.c.reason)).all())


def finished_by_status_and_reason(database, since):
    """[(status, reason, migrations)] that ended from ``since`` on (a bounded window)."""
    table = models.LbMigration.__table__
    with database.reader() as session:
        return session.execute(sa.select(table.c.status, table.c.reason, sa.func.count())
                               .where(table.c.finished_at >= since)
                               .group_by(table.c.status, table.c.reason)).all()


def count_open(database):
    """Migrations requested and not finished yet, whenever requested (status index)."""
    table = models.LbMigration.__table__
    with database.reader() as session:
        return session.execute(sa.select(sa.func.count()).select_from(table)
                               .where(table.c.status == REQUESTED)).scalar()


def counts_by_status(database, sources, since, until):
    """{status: migrations} requested in [since, until) from one of ``sources``."""
    table = models.LbMigration.__table__
    query = (sa.select(table.c.status, sa.func.count())
             .where(table.c.created_at >= since, table.c.created_at < until,
                    table.c.source.in_(list(sources)))
             .group_by(table.c.status))
    with database.reader() as session:
        return dict(session.execute(query).all())


TABLE = models.LbMigration.__table__


def _purged(cutoff):
    """Finished migrations requested before ``cutoff``; open ones are never purged."""
    return sa.and_(TABLE.c.created_at < cutoff, TABLE.c.status != 'requested')


def purgeable(database, cutoff):
    """How many rows ``purge`` would delete (``db purge --dry-run``)."""
    return retention.count(database, TABLE, _purged(cutoff))


def purge(database, cutoff, batch_size, max_batches=None):
    """Delete the finished migrations requested before ``cutoff``; (rows, done?)."""
    return retention.delete_in_batches(database, TABLE, _purged(cutoff), batch_size,
                                       max_batches)


def failures_since(database, instance_uuid, source, since):
    """(how many, when the last ended) of the failed moves of ``instance_uuid``
    off ``source`` requested from ``since`` on: what an evacuation backs off on."""
    table = models.LbMigration.__table__
    with database.reader() as session:
        count, last = session.execute(
            sa.select(sa.func.count(), sa.func.max(table.c.finished_at))
            .where(table.c.instance_uuid == instance_uuid, table.c.source == source,
                   table.c.status == 'failed', table.c.created_at >= since)).one()
        return count, last


def withdraw(database, instance_uuid, source, destination):
    """Delete the open requests to move ``instance_uuid`` ``source`` -> ``destination``:
    a daemon recorded them and died before nova was asked (plan recovery), and
    they must not count as moves (cooldown, oscillation) of a move resent now."""
    with database.writer() as session:
        return session.execute(TABLE.delete().where(
            TABLE.c.instance_uuid == instance_uuid, TABLE.c.source == source,
            TABLE.c.destination == destination, TABLE.c.status == REQUESTED)).rowcount
