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

"""Plans offered by racing daemons, and the status a migration adds, on the real servers.

The tests are tests/unit/db/test_plans.py's, run again here with
conftest.py's ``empty_database`` on MariaDB and PostgreSQL.
"""

from tests.unit.db import test_plans as on_sqlite

any_database = on_sqlite.any_database
test_racing_offers_never_leave_two_pending_plans = \
    on_sqlite.test_racing_offers_never_leave_two_pending_plans
test_superseded_status_after_db_sync_from_the_previous_head = \
    on_sqlite.test_superseded_status_after_db_sync_from_the_previous_head
