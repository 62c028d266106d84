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

"""The DRS database: group ``[drs_database]`` with oslo.db's engine options.

nova-drs never touches nova's tables; it keeps its own schema in its own
database, configured like nova's ``[database]`` section. Every option
registered here reaches oslo.db's enginefacade (``nova_drs.db.api``); the
oslo.db options only its ``DBAPI`` reads (``backend``, ``use_db_reconnect``,
``db_*retr*``) and the asyncio URLs are not registered, since nova-drs uses
neither.
"""

import copy

from oslo_config import cfg
from oslo_db import options as db_options

database_group = cfg.OptGroup(
    'drs_database', title='nova-drs database',
    help='The database nova-drs keeps its own tables in (host power state, '
         'statistics, rules, plans). Any SQLAlchemy URL oslo.db supports: '
         'sqlite:///path, mysql+pymysql://user:pass@host/nova_drs, '
         'postgresql+psycopg2://user:pass@host/nova_drs. When connection is '
         'unset, a SQLite file under [drs] state_path is used.')

#: oslo.db options enginefacade does not read (DBAPI retries, its backend,
#: asyncio engines): registering them would accept values that do nothing.
NOT_HONOURED = frozenset(('backend', 'use_db_reconnect', 'db_retry_interval',
                          'db_inc_retry_interval', 'db_max_retry_interval',
                          'db_max_retries', 'asyncio_connection',
                          'asyncio_slave_connection'))

database_opts = [copy.deepcopy(opt) for opt in db_options.database_opts
                 if opt.dest not in NOT_HONOURED]
if not any(opt.dest == 'synchronous_reader' for opt in database_opts):
    # oslo.db < 18 (2025.2's 17.4.0) has enginefacade's synchronous_reader
    # argument but no option for it; the same option, so a replica serves
    # readers there too (oslo.db 18's help).
    database_opts.append(cfg.BoolOpt(
        'synchronous_reader', default=True,
        help='Whether or not to assume a reader context needs to guarantee it can '
             'read data committed by a writer assuming replication lag is present; '
             'defaults to True. When False, a reader context works the same as '
             'async_reader and will select the slave database if present. Note that '
             'this parameter has no effect if you do not set any slave_connection.'))


def list_opts():
    return [(database_group, database_opts)]
