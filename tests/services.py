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

"""Connections to the real services tests use (MariaDB, PostgreSQL, Redis, RabbitMQ).

Only the component tier (tests/component) and the tiers above it use them;
tests/unit/tree/test_unit_isolation.py keeps the unit tier from importing
this module. ``tools/ensure-services.sh`` (run by ``make component``) starts
them when they are absent; a test that still cannot reach one fails with a
message saying which service and how to start it, never skips.
"""

import contextlib
import socket
import uuid

from nova_drs.db import api
from nova_drs.db import migration

SERVICES = {
    'mariadb': ('127.0.0.1', 3306),
    'postgresql': ('127.0.0.1', 5432),
    'redis': ('127.0.0.1', 6379),
    'rabbitmq': ('127.0.0.1', 5672),
}


class ServiceUnavailable(AssertionError):
    pass


def require(name):
    host, port = SERVICES[name]
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError as exc:
        raise ServiceUnavailable(
            '%s is not reachable on %s:%d (%s); run tools/ensure-services.sh '
            '(make test does) to start it' % (name, host, port, exc)) from None


class ScratchDatabase:
    """A throw-away database on the real MariaDB or PostgreSQL server."""

    def __init__(self, kind):
        require(kind)
        self.kind = kind
        self.name = 'nova_drs_test_%s' % uuid.uuid4().hex[:12]
        if kind == 'mariadb':
            self.url = 'mysql+pymysql://root@127.0.0.1:3306/%s' % self.name
        else:
            self.url = 'postgresql+psycopg2://postgres@127.0.0.1:5432/%s' % self.name
        self._execute('CREATE DATABASE %s' % self.name)

    def _execute(self, statement):
        if self.kind == 'mariadb':
            import pymysql
            connection = pymysql.connect(host='127.0.0.1', port=3306, user='root',
                                         autocommit=True)
        else:
            import psycopg2
            connection = psycopg2.connect(host='127.0.0.1', port=5432, user='postgres',
                                          dbname='postgres')
            connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(statement)
        finally:
            connection.close()

    def drop(self):
        self._execute('DROP DATABASE IF EXISTS %s' % self.name)


@contextlib.contextmanager
def scratch_database(kind, sync=False):
    """A DRS Database on a throw-away database of ``kind``, dropped afterwards.

    The body of the component tier's database fixtures, which run the unit
    tier's SQLite tests again on the real servers.
    """
    scratch = ScratchDatabase(kind)
    database = api.Database(scratch.url)
    try:
        if sync:
            migration.sync(database)
        yield database
    finally:
        database.dispose()
        scratch.drop()


@contextlib.contextmanager
def redis_name(prefix):
    """A name of one test's own on the real Redis (a tooz group or namespace).

    Every key naming it, and its entry in tooz's set of groups, are deleted
    afterwards: tests running side by side (pytest-xdist) never share one.
    """
    require('redis')
    import redis
    name = '%s-%s' % (prefix, uuid.uuid4().hex[:12])
    yield name
    client = redis.Redis(host='127.0.0.1', port=6379)
    keys = client.keys('*%s*' % name)
    if keys:
        client.delete(*keys)
    client.srem('_tooz_groups', name)
