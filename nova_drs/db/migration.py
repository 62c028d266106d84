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

"""Schema creation and upgrade with alembic (``nova-drs-manage db sync``)."""

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script
from oslo_db import exception as db_exc
import sqlalchemy.exc

from nova_drs import exception
from nova_drs.db import api


def _alembic_config(connection):
    config = alembic_config.Config()
    config.set_main_option('script_location', 'nova_drs.db:migrations')
    config.attributes['connection'] = connection
    return config


def head_revision():
    """The head revision(s) as one comparable string."""
    heads = alembic_script.ScriptDirectory.from_config(
        _alembic_config(None)).get_heads()
    return ','.join(sorted(heads))


def current_revision(database):
    """The applied revision(s) as one string, or None on an empty database."""
    with _connect(database) as connection:
        heads = alembic_migration.MigrationContext.configure(
            connection).get_current_heads()
    return ','.join(sorted(heads)) or None


def sync(database, revision='heads'):
    """Create or upgrade the schema; a second run is a no-op."""
    with _connect(database) as connection:
        alembic_command.upgrade(_alembic_config(connection), revision)
        connection.commit()


class _connect:
    def __init__(self, database):
        self._database = database

    def __enter__(self):
        try:
            self._connection = self._database.engine.connect()
        except (db_exc.DBError, sqlalchemy.exc.SQLAlchemyError) as exc:
            raise exception.DatabaseError('cannot connect to %s: %s' % (
                api.masked(self._database.connection), api.reason(exc))) from None
        return self._connection

    def __exit__(self, *exc_info):
        self._connection.close()
