"""What each daemon cycle planned from (``drs_cycle_inventory``) for what-if replay.

Revision ID: 0008_sim_inventory
Revises: 0007_observability
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0008_sim_inventory'
down_revision = '0007_observability'
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade():
    op.create_table(
        'drs_cycle_inventory',
        sa.Column('id', BigId, primary_key=True, autoincrement=True),
        sa.Column('taken_at', sa.DateTime, nullable=False),
        sa.Column('body', sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mysql'),
                  nullable=False),
    )
    op.create_index('drs_cycle_inventory_taken_at_idx', 'drs_cycle_inventory', ['taken_at'])
