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

"""Decisions of each cycle (``lb_decisions``) for ``drs explain``."""

from alembic import op
import sqlalchemy as sa

from nova_drs.db import types

revision = '0010_decisions'
down_revision = '0009_plan_actions_mediumtext'


def upgrade():
    op.create_table(
        'lb_decisions',
        sa.Column('id', types.BigId, primary_key=True, autoincrement=True),
        sa.Column('cycle_at', sa.DateTime, nullable=False),
        sa.Column('subject_type', sa.String(16), nullable=False),
        sa.Column('subject', sa.String(255), nullable=False),
        sa.Column('verdict', sa.String(32), nullable=False),
        sa.Column('refusal', sa.String(64)),
        sa.Column('reason', sa.Text, nullable=False),
        sa.Column('refused', sa.Text),
    )
    op.create_index('lb_decisions_subject_idx', 'lb_decisions',
                    ['subject_type', 'subject', 'cycle_at'])
    op.create_index('lb_decisions_cycle_at_idx', 'lb_decisions', ['cycle_at'])
