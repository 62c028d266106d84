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

"""Maintenance mode host states (entering_maintenance, maintenance).

Widens ``drs_hosts.suspend_state`` (``entering_maintenance`` is 20
characters) and lets the check constraint accept the two new states. Also
joins the two earlier heads into one.
"""

from alembic import op
import sqlalchemy as sa

revision = '0005_maintenance'
down_revision = ('0002_overcommit', '0004_api')

OLD_STATES = ('active', 'suspending', 'suspended', 'waking', 'error')
NEW_STATES = OLD_STATES + ('entering_maintenance', 'maintenance')


def _check(states):
    return "suspend_state IN ('%s')" % "','".join(states)


def upgrade():
    with op.batch_alter_table('drs_hosts') as batch:
        batch.drop_constraint('ck_drs_hosts_suspend_state', type_='check')
        batch.alter_column('suspend_state', existing_type=sa.String(16),
                           type_=sa.String(32), existing_nullable=False)
        batch.create_check_constraint('ck_drs_hosts_suspend_state', _check(NEW_STATES))
