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

"""Plan status ``superseded``: a pending plan a later cycle replaced.

Until now such a plan was ``rejected`` with ``decided_by = 'superseded'``;
the check constraint accepts the new status and those plans get it.
"""

from alembic import op
import sqlalchemy as sa

revision = '0014_plan_superseded'
down_revision = '0013_migrations_created_at'

OLD_STATUSES = ('pending', 'approved', 'rejected', 'executing', 'done', 'failed')
NEW_STATUSES = ('pending', 'approved', 'rejected', 'superseded', 'executing', 'done',
                'failed')

_plans = sa.table('lb_plans', sa.column('status', sa.String(16)),
                  sa.column('decided_by', sa.String(255)))


def _check(statuses):
    return "status IN ('%s')" % "','".join(statuses)


def _constrain(statuses):
    with op.batch_alter_table('lb_plans') as batch:
        batch.drop_constraint('ck_lb_plans_status', type_='check')
        batch.create_check_constraint('ck_lb_plans_status', _check(statuses))


def upgrade():
    _constrain(NEW_STATUSES)
    op.execute(_plans.update().where(_plans.c.status == 'rejected',
                                     _plans.c.decided_by == 'superseded')
               .values(status='superseded'))


def downgrade():
    op.execute(_plans.update().where(_plans.c.status == 'superseded')
               .values(status='rejected', decided_by='superseded'))
    _constrain(OLD_STATUSES)
