"""Migrations the daemon requested (table ``lb_migrations``)."""


from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models

REQUESTED = 'requested'



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
