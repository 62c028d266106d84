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

"""API tables: admin requests for the daemon and the loadbalancer's plans."""

from alembic import op
import sqlalchemy as sa

revision = '0004_api'
down_revision = '0001'


def upgrade():
    op.create_table(
        'lb_requests',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('action', sa.String(32), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('requested_by', sa.String(255)),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('finished_at', sa.DateTime),
        sa.Column('result', sa.Text),
        sa.CheckConstraint(
            "status IN ('pending','running','done','failed')",
            name='ck_lb_requests_status'),
    )
    op.create_index('lb_requests_status_idx', 'lb_requests', ['status'])
    op.create_table(
        'lb_plans',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('cluster', sa.String(255)),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('mode', sa.String(16), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('actions', sa.Text),
        sa.Column('reasons', sa.Text),
        sa.Column('decided_by', sa.String(255)),
        sa.CheckConstraint(
            "status IN ('pending','approved','rejected','executing','done','failed')",
            name='ck_lb_plans_status'),
    )
    op.create_index('lb_plans_created_at_idx', 'lb_plans', ['created_at'])


def downgrade():
    op.drop_table('lb_plans')
    op.drop_table('lb_requests')
