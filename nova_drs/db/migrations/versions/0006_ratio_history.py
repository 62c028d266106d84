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

"""History of each host's effective allocation ratios."""

from alembic import op
import sqlalchemy as sa

revision = '0006_ratio_history'
down_revision = '0005_maintenance'


def upgrade():
    op.create_table(
        'host_ratio_history',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('cpu_allocation_ratio', sa.Float, nullable=False),
        sa.Column('ram_allocation_ratio', sa.Float, nullable=False),
        sa.Column('since', sa.DateTime, nullable=False),
        sa.Index('host_ratio_history_host_since_idx', 'host', 'since'),
    )
