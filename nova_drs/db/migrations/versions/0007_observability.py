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

"""Host state history (``drs_host_state_changes``) for metrics and energy reports."""

from alembic import op
import sqlalchemy as sa

from nova_drs.db import types

revision = '0007_observability'
down_revision = '0006_ratio_history'


def upgrade():
    op.create_table(
        'drs_host_state_changes',
        sa.Column('id', types.BigId, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('state', sa.String(32), nullable=False),
        sa.Column('reason', sa.Text),
        sa.Column('changed_at', sa.DateTime, nullable=False),
    )
    op.create_index('drs_host_state_changes_host_idx', 'drs_host_state_changes',
                    ['host', 'changed_at'])
    op.create_index('drs_host_state_changes_changed_at_idx', 'drs_host_state_changes',
                    ['changed_at'])
