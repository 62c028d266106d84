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

"""``lb_migrations`` found by when they were requested: every cycle reads the
moves of one cooldown (the planner's cooldown), a day of metrics reads a window."""

from alembic import op

revision = '0013_migrations_created_at'
down_revision = '0012_plan_actions'


def upgrade():
    op.create_index('lb_migrations_created_at_idx', 'lb_migrations', ['created_at'])
