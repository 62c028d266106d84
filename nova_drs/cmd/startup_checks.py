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

"""Start-up checks of the commands that need the database or the plugins.

They belong to the commands, not to ``nova_drs.conf``: the configuration
package is the bottom layer (every other package reads it) and so must not
import the database, the plugin loaders or the scalers it would need to run
them. ``nova_drs.conf.startup`` keeps the checks that only read options.
Like those, each check turns a configuration that cannot work into a
``ConfigError`` whose message is one line naming the option, so a command
can print it and exit 1 before it starts anything.
"""

# stdlib logging, not oslo_log: probe_database lowers the level of oslo.db's
# own logger for one connection attempt, which needs logging.ERROR and the
# stdlib Logger's setLevel.
import logging as std_logging
import os

from nova_drs import exception


def _file_in_the_way(path):
    """The first existing component of ``path`` that is not a directory."""
    path = os.path.abspath(path)
    while not os.path.lexists(path):
        path = os.path.dirname(path)
    return None if os.path.isdir(path) else path


def _usable_directory(path, label):
    """Create ``path`` if needed; ConfigError unless it is a writable directory."""
    blocker = _file_in_the_way(path)
    if blocker:
        raise exception.ConfigError('%s: %s is a file, not a directory' % (label, blocker))
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise exception.ConfigError('%s: cannot create directory %s: %s'
                                    % (label, path, exc.strerror)) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise exception.ConfigError('%s: directory %s is not writable' % (label, path))


def check_paths(conf, lock_file=False):
    """State directory and SQLite file: usable before anything opens them.

    ``lock_file``: the command keeps its single-node lock under state_path.
    """
    from sqlalchemy.engine import url as sa_url

    from nova_drs.db import api as db_api
    state = '[drs] state_path = %s' % conf.drs.state_path
    if lock_file and not conf.drs_coordination.backend_url:
        _usable_directory(conf.drs.state_path, state)
    label = '[drs_database] connection = %s' % db_api.masked(conf.drs_database.connection)
    if not conf.drs_database.connection:
        _usable_directory(conf.drs.state_path, state)
        label = state
    try:
        url = sa_url.make_url(db_api.connection_from_conf(conf))
    except Exception:
        return  # Database() reports an unparseable URL in one line
    if url.get_backend_name() != 'sqlite' or not url.database or url.database == ':memory:':
        return
    path = os.path.abspath(url.database)
    _usable_directory(os.path.dirname(path), label)
    if os.path.isdir(path) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise exception.ConfigError('%s: SQLite database %s is not a writable file'
                                    % (label, path))


def probe_database(conf):
    """Connect once, without oslo.db's retries: an unreachable DRS database
    is one line within seconds. The service's own connections keep the
    configured retries for outages after startup."""

    from nova_drs.db import api as db_api
    group = conf.drs_database
    # One attempt (oslo.db's max_retries=0 would not connect at all), and
    # its "SQL connection failed. 1 attempts left." warning is not news.
    engines_log = std_logging.getLogger('oslo_db.sqlalchemy.engines')
    level = engines_log.level
    engines_log.setLevel(std_logging.ERROR)
    try:
        database = db_api.Database(db_api.connection_from_conf(conf), max_retries=1,
                                   retry_interval=0,
                                   mysql_sql_mode=group.mysql_sql_mode,
                                   sqlite_synchronous=group.sqlite_synchronous)
        database.engine  # noqa: B018  (connects)
    except exception.DatabaseError as exc:
        raise exception.ConfigError(str(exc)) from None
    finally:
        engines_log.setLevel(level)
    database.dispose()


def check_plugins(conf):
    """Every plugin name in the options is loadable, whether used now or not."""
    from nova_drs import loadbalancer_plugins
    from nova_drs.scale import scalers
    loadbalancer_plugins.check_names(conf)
    try:
        scalers.load(conf.drs_scale.scaler)
    except exception.ScalerError as exc:
        raise exception.ConfigError(str(exc)) from None
