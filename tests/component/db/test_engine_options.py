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

"""``[drs_database]`` options that only a real server shows reaching the engine."""

import sqlalchemy as sa

from nova_drs.db import api
from tests import services
from tests.unit.db.test_engine_options import _conf


def test_connection_parameters_and_sql_mode_reach_mariadb(tmp_path):
    scratch = services.ScratchDatabase('mariadb')
    conf = _conf(tmp_path, '[drs_database]\nconnection = %s\n'
                           'connection_parameters = charset=latin1\n'
                           'mysql_sql_mode = ANSI_QUOTES\n' % scratch.url)
    database = api.Database.from_conf(conf)
    try:
        with database.reader() as session:
            charset, mode = session.execute(
                sa.text('SELECT @@character_set_client, @@SESSION.sql_mode')).one()
        assert charset == 'latin1'
        assert 'ANSI_QUOTES' in mode
    finally:
        database.dispose()
        scratch.drop()
