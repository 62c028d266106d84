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

"""Power drawn as the hosts' BMCs measured it (``drs_power_readings``)."""

from alembic import op
import sqlalchemy as sa

from nova_drs.db import types

revision = '0011_power_readings'
down_revision = '0010_decisions'


def upgrade():
    op.create_table(
        'drs_power_readings',
        sa.Column('id', types.BigId, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('read_at', sa.DateTime, nullable=False),
        sa.Column('watts', sa.Float, nullable=False),
    )
    op.create_index('drs_power_readings_host_idx', 'drs_power_readings',
                    ['host', 'read_at'])
    op.create_index('drs_power_readings_read_at_idx', 'drs_power_readings', ['read_at'])
