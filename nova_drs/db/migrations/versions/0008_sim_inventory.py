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

"""What each daemon cycle planned from (``drs_cycle_inventory``) for what-if replay."""

from alembic import op
import sqlalchemy as sa

from nova_drs.db import types

revision = '0008_sim_inventory'
down_revision = '0007_observability'


def upgrade():
    op.create_table(
        'drs_cycle_inventory',
        sa.Column('id', types.BigId, primary_key=True, autoincrement=True),
        sa.Column('taken_at', sa.DateTime, nullable=False),
        sa.Column('body', types.LongBlob, nullable=False),
    )
    op.create_index('drs_cycle_inventory_taken_at_idx', 'drs_cycle_inventory', ['taken_at'])
