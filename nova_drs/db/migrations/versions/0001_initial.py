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

"""Initial schema: host DRS state, statistics, rules."""

from alembic import op
import sqlalchemy as sa

from nova_drs.db import types

revision = '0001'
down_revision = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime, nullable=False),
            sa.Column('updated_at', sa.DateTime)]


def _soft_delete():
    return [sa.Column('deleted_at', sa.DateTime),
            sa.Column('deleted', sa.Integer, nullable=False)]


def upgrade():
    op.create_table(
        'drs_hosts',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('hypervisor_hostname', sa.String(255)),
        sa.Column('suspend_state', sa.String(16), nullable=False),
        sa.Column('state_reason', sa.Text),
        sa.Column('state_changed_at', sa.DateTime),
        sa.Column('state_version', sa.Integer, nullable=False),
        sa.Column('mac_to_wake', sa.String(17)),
        sa.Column('power_driver', sa.String(64)),
        sa.Column('power_mode', sa.String(16)),
        sa.Column('power_options', sa.Text),
        sa.Column('wake_failed', sa.Boolean, nullable=False),
        sa.Column('disabled_by_drs', sa.Boolean, nullable=False),
        sa.Column('power_requested_at', sa.DateTime),
        *_timestamps(),
        sa.UniqueConstraint('host', name='uniq_drs_hosts0host'),
        sa.CheckConstraint(
            "suspend_state IN ('active','suspending','suspended','waking','error')",
            name='ck_drs_hosts_suspend_state'),
    )
    op.create_table(
        'compute_node_stats',
        sa.Column('id', types.BigId, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('hypervisor_hostname', sa.String(255)),
        sa.Column('compute_id', sa.Integer),
        sa.Column('memory_total', sa.Integer),
        sa.Column('memory_used', sa.Integer),
        sa.Column('cpu_used_percent', sa.Float),
        sa.Column('vcpus', sa.Integer),
        sa.Column('sampled_at', sa.DateTime, nullable=False),
        *_timestamps(),
        *_soft_delete(),
        sa.UniqueConstraint('host', 'sampled_at',
                            name='uniq_compute_node_stats0host0sampled_at'),
    )
    op.create_index('compute_node_stats_sampled_at_idx', 'compute_node_stats',
                    ['sampled_at'])
    op.create_table(
        'instance_stats',
        sa.Column('id', types.BigId, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('host', sa.String(255)),
        sa.Column('libvirt_id', sa.Integer),
        sa.Column('vcpus', sa.Integer),
        sa.Column('cpu_time', sa.BigInteger),
        sa.Column('prev_cpu_time', sa.BigInteger),
        sa.Column('cpu_used_percent', sa.Float),
        sa.Column('mem', sa.Integer),
        sa.Column('block_dev_iops', sa.BigInteger),
        sa.Column('prev_block_dev_iops', sa.BigInteger),
        sa.Column('prev_updated_at', sa.DateTime),
        sa.Column('sampled_at', sa.DateTime, nullable=False),
        *_timestamps(),
        *_soft_delete(),
        sa.UniqueConstraint('instance_uuid', 'sampled_at',
                            name='uniq_instance_stats0uuid0sampled_at'),
    )
    op.create_index('instance_stats_host_sampled_at_idx', 'instance_stats',
                    ['host', 'sampled_at'])
    op.create_index('instance_stats_sampled_at_idx', 'instance_stats',
                    ['sampled_at'])
    op.create_table(
        'lb_migrations',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('source', sa.String(255), nullable=False),
        sa.Column('destination', sa.String(255)),
        sa.Column('kind', sa.String(8), nullable=False),
        sa.Column('reason', sa.Text),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('finished_at', sa.DateTime),
        *_timestamps(),
    )
    op.create_index('lb_migrations_instance_idx', 'lb_migrations',
                    ['instance_uuid', 'created_at'])
    op.create_index('lb_migrations_status_idx', 'lb_migrations', ['status'])
    op.create_table(
        'lb_rules',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('type', sa.String(32), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('allow', sa.Boolean, nullable=False),
        *_timestamps(),
    )
