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

"""The DRS database: group ``[drs_database]`` with oslo.db's usual options.

nova-drs never touches nova's tables; it keeps its own schema in its own
database, configured exactly like nova's ``[database]`` section.
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

database_opts = copy.deepcopy(db_options.database_opts)


def list_opts():
    return [(database_group, database_opts)]
