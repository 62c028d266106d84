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

"""Overcommit: ratios each instance was deployed with; ratios synced to placement."""

from alembic import op
import sqlalchemy as sa

revision = '0002_overcommit'
down_revision = '0001'


def upgrade():
    op.create_table(
        'instance_overcommit',
        sa.Column('instance_uuid', sa.String(36), primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('cpu_allocation_ratio', sa.Float, nullable=False),
        sa.Column('ram_allocation_ratio', sa.Float, nullable=False),
        sa.Column('recorded_by', sa.String(64), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime),
        sa.Index('instance_overcommit_host_idx', 'host'),
    )
    op.create_table(
        'overcommit_synced_ratios',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('resource_class', sa.String(32), primary_key=True),
        sa.Column('allocation_ratio', sa.Float, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.Column('updated_at', sa.DateTime),
    )
