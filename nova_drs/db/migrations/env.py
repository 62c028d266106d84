"""Alembic environment: runs on the connection nova_drs.db.migration hands in."""

from alembic import context

from nova_drs.db import models


def run_migrations():
    connection = context.config.attributes['connection']
    context.configure(connection=connection,
                      target_metadata=models.Base.metadata,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
