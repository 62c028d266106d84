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

"""Plans of any size on MySQL/MariaDB: ``lb_plans.actions``/``reasons`` MEDIUMTEXT.

TEXT holds 64 KiB there (about 400 migrate actions); a plan lists one action
per move, so a big cluster overflowed it. MEDIUMTEXT holds 16 MiB. SQLite
and PostgreSQL TEXT are unbounded: nothing to do on them.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0009_plan_actions_mediumtext'
down_revision = '0008_sim_inventory'

COLUMNS = ('actions', 'reasons')


def upgrade():
    _retype(mysql.MEDIUMTEXT(), sa.Text())


def downgrade():
    _retype(sa.Text(), mysql.MEDIUMTEXT())


def _retype(new, old):
    if op.get_bind().dialect.name != 'mysql':
        return
    for column in COLUMNS:
        op.alter_column('lb_plans', column, type_=new, existing_type=old,
                        existing_nullable=True)
