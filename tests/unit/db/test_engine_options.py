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

"""Every ``[drs_database]`` option registered reaches the engine."""

import sys

from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import engines
import pytest
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.conf import database as database_conf
from nova_drs.db import api
from nova_drs.db import hosts
from nova_drs.db import migration


def _conf(tmp_path, text):
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    path = tmp_path / 'nova.conf'
    path.write_text('[drs]\nstate_path = %s\n%s' % (tmp_path / 'state', text))
    conf(['--config-file', str(path)])
    return conf


def test_every_registered_option_is_one_enginefacade_reads():
    known = set()
    factory = enginefacade._TransactionFactory()
    for options in (factory._url_cfg, factory._engine_cfg, factory._facade_cfg):
        known |= set(options)
    registered = {opt.dest for opt in database_conf.database_opts}
    assert registered <= known
    assert not registered & database_conf.NOT_HONOURED
    assert 'db_max_retries' not in registered and 'backend' not in registered


def test_slave_connection_serves_readers_when_not_synchronous(tmp_path):
    primary, replica = tmp_path / 'primary.sqlite', tmp_path / 'replica.sqlite'
    for path, host in ((primary, 'on-primary'), (replica, 'on-replica')):
        seed = api.Database('sqlite:///%s' % path)
        migration.sync(seed)
        hosts.ensure(seed, host)
        seed.dispose()
    conf = _conf(tmp_path, '[drs_database]\nconnection = sqlite:///%s\n'
                           'slave_connection = sqlite:///%s\nsynchronous_reader = false\n'
                           % (primary, replica))
    database = api.Database.from_conf(conf)
    try:
        assert set(hosts.states(database)) == {'on-replica'}
        with database.writer() as session:
            writer_hosts = set(session.scalars(sa.text('SELECT host FROM drs_hosts')))
        assert writer_hosts == {'on-primary'}
    finally:
        database.dispose()


def test_bad_slave_connection_is_one_line(tmp_path):
    conf = _conf(tmp_path, '[drs_database]\nslave_connection = nosuchdb://x\n')
    with pytest.raises(exception.DatabaseError, match='invalid .drs_database. slave_connection'):
        api.Database.from_conf(conf)


class _Patcher:
    """eventlet.patcher's one function the check calls."""

    def __init__(self, patched):
        self.patched = patched

    def is_monkey_patched(self, module):
        return self.patched and module == 'thread'


@pytest.mark.parametrize('patcher, yields', [
    (None, False),                  # eventlet never imported: the daemon
    (_Patcher(False), False),       # imported by a library, threads native
    (_Patcher(True), True),         # nova's green services
])
def test_a_connection_checkin_yields_only_where_threads_are_green(monkeypatch, patcher, yields):
    """oslo.db's checkin listener sleeps 0 s to let green threads take turns;
    among native threads it only handed the core away at every session's end."""
    if patcher is None:
        monkeypatch.delitem(sys.modules, 'eventlet.patcher', raising=False)
    else:
        monkeypatch.setitem(sys.modules, 'eventlet.patcher', patcher)
    database = api.Database('sqlite://')
    try:
        assert sa.event.contains(database.engine, 'checkin', engines._thread_yield) is yields
    finally:
        database.dispose()


def test_an_explicit_thread_checkin_is_kept():
    database = api.Database('sqlite://', thread_checkin=True)
    try:
        assert sa.event.contains(database.engine, 'checkin', engines._thread_yield)
    finally:
        database.dispose()
