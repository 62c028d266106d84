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

"""Per-action progress of plans (``lb_plan_actions``), so an ``executing`` plan
survives exceptions, restarts and failovers; plans found by status and cluster."""

from alembic import op
import sqlalchemy as sa

from nova_drs.db import types

revision = '0012_plan_actions'
down_revision = '0011_power_readings'

STATUSES = ('pending', 'started', 'done', 'failed', 'skipped')


def upgrade():
    op.create_table(
        'lb_plan_actions',
        sa.Column('id', types.BigId, primary_key=True, autoincrement=True),
        sa.Column('plan_id', sa.Integer,
                  sa.ForeignKey('lb_plans.id', ondelete='CASCADE'), nullable=False),
        sa.Column('position', sa.Integer, nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('detail', sa.Text),
        sa.Column('updated_at', sa.DateTime),
        sa.UniqueConstraint('plan_id', 'position', name='uniq_lb_plan_actions0plan0position'),
        sa.CheckConstraint("status IN ('%s')" % "','".join(STATUSES),
                           name='ck_lb_plan_actions_status'),
    )
    op.create_index('lb_plan_actions_plan_status_idx', 'lb_plan_actions',
                    ['plan_id', 'status'])
    op.create_index('lb_plans_status_idx', 'lb_plans', ['status', 'cluster'])


def downgrade():
    op.drop_index('lb_plans_status_idx', table_name='lb_plans')
    op.drop_table('lb_plan_actions')
