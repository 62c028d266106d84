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

"""Engine and sessions for the DRS database (oslo.db enginefacade)."""

import contextlib
import os
import sys
import threading

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from sqlalchemy.engine import url as sa_url

from nova_drs import exception
from nova_drs.conf import database as database_conf


def masked(connection):
    """The URL with its password replaced, safe for logs and error messages."""
    try:
        return sa_url.make_url(connection).render_as_string(hide_password=True)
    except Exception:
        return '<unparseable URL>'


def reason(exc):
    """First line of a driver error, without SQLAlchemy's background link."""
    inner = getattr(exc, 'inner_exception', None) or getattr(exc, 'orig', None) or exc
    return (str(inner).strip().splitlines() or [type(inner).__name__])[0]


def connection_from_conf(conf):
    """The configured URL, or the embedded SQLite file under [drs] state_path."""
    if conf.drs_database.connection:
        return conf.drs_database.connection
    return 'sqlite:///' + os.path.join(conf.drs.state_path, 'nova_drs.sqlite')


def green_threads():
    """True when eventlet monkey-patched this process's threads; eventlet
    is not imported to find out (the daemon never imports it)."""
    patcher = sys.modules.get('eventlet.patcher')
    return bool(patcher and patcher.is_monkey_patched('thread'))


class _Holder:
    """Object enginefacade attaches its per-transaction state to."""


class Database:
    """One DRS database. Cheap to keep for the life of a process."""

    def __init__(self, connection, **engine_options):
        try:
            url = sa_url.make_url(connection)
            url.get_dialect()
        except Exception as exc:
            raise exception.DatabaseError('invalid database URL %s: %s'
                                          % (masked(connection), reason(exc))) from None
        if url.get_backend_name() == 'sqlite' and url.database:
            directory = os.path.dirname(os.path.abspath(url.database))
            os.makedirs(directory, exist_ok=True)
        if engine_options.get('slave_connection'):
            try:
                sa_url.make_url(engine_options['slave_connection']).get_dialect()
            except Exception as exc:
                raise exception.DatabaseError('invalid [drs_database] slave_connection %s: %s' % (
                    masked(engine_options['slave_connection']), reason(exc))) from None
        self.connection = connection
        # oslo.db's thread_checkin yields (time.sleep(0)) when a session
        # returns its connection, so that green threads take turns. In a
        # process of native threads (nova-loadbalancer, nova-drs-sim) it is
        # a system call at the end of every session that hands the core
        # away: on a busy host the cycle then waits for it (a closed-loop
        # twin run beside the CI lanes, load 5.8 on two cores, spent 28.7 s
        # of its 72 s there). Kept where eventlet patched the threads
        # (nova's services, which load our filters and API).
        engine_options.setdefault('thread_checkin', green_threads())
        self._context = enginefacade.transaction_context()
        self._context.configure(connection=connection, **engine_options)

    @classmethod
    def from_conf(cls, conf):
        """Every ``[drs_database]`` option, handed to enginefacade as it is.

        enginefacade reads only a group named ``[database]`` (nova's own), so
        the group's values are passed by name: one per registered option,
        none left out (TLS ``connection_parameters``, ``slave_connection``
        with ``synchronous_reader``, ``mysql_wsrep_sync_wait``...).
        """
        group = conf.drs_database
        options = {opt.dest: group[opt.dest] for opt in database_conf.database_opts
                   if opt.dest != 'connection'}
        return cls(connection_from_conf(conf), **options)

    @property
    def engine(self):
        try:
            return self._context.writer.get_engine()
        except db_exc.DBError as exc:
            raise exception.DatabaseError('cannot connect to %s: %s'
                                          % (masked(self.connection), reason(exc))) from None

    @contextlib.contextmanager
    def writer(self):
        """A session in a transaction that commits on success."""
        self.engine  # noqa: B018  (turns connection failures into DatabaseError)
        with self._context.writer.using(_Holder()) as session:
            yield session

    @contextlib.contextmanager
    def reader(self):
        self.engine  # noqa: B018
        with self._context.reader.using(_Holder()) as session:
            yield session

    def dispose(self):
        self._context.dispose_pool()


_databases = {}
_databases_lock = threading.Lock()


def shared_database(conf):
    """The process-wide Database for ``conf``'s DRS connection (created once).

    For the plugins nova loads (scheduler filters and weighers), which have
    no process of their own to hold one, and the ``nova-drs-manage`` commands.
    """
    connection = connection_from_conf(conf)
    with _databases_lock:
        if connection not in _databases:
            _databases[connection] = Database.from_conf(conf)
        return _databases[connection]
