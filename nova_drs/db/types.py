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

"""Column types of the nova-drs tables, shared by the models and the migrations."""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

#: Ids of the tables that grow every cycle: 64-bit, except on SQLite, which
#: autoincrements only an INTEGER primary key (also 64-bit there).
BigId = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
#: Unbounded JSON lists: TEXT stops at 64 KiB on MySQL/MariaDB, MEDIUMTEXT at 16 MiB.
LongText = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql')
#: Compressed snapshots: BLOB stops at 64 KiB on MySQL/MariaDB, LONGBLOB at 4 GiB.
LongBlob = sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mysql')
