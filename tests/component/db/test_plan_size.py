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

"""Big plans survive the real servers: 2,000 actions stored and read back whole.

The test is tests/unit/db/test_plan_size.py's, run again here on MariaDB
(where ``lb_plans.actions`` was TEXT, 64 KiB, before migration
0009_plan_actions_mediumtext) and on PostgreSQL.
"""

import pytest

from tests import services
from tests.unit.db import test_plan_size as on_sqlite


@pytest.fixture(params=['mariadb', 'postgresql'])
def scratch_url(request):
    scratch = services.ScratchDatabase(request.param)
    yield scratch.url
    scratch.drop()


test_plan_of_2000_actions_after_db_sync_from_previous_head = \
    on_sqlite.test_plan_of_2000_actions_after_db_sync_from_previous_head
