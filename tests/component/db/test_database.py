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

"""The schema, its migrations and the compare-and-swap transitions on the real servers.

The tests are tests/unit/db/test_database.py's, run again here with
conftest.py's ``empty_database`` on MariaDB and PostgreSQL: one test, every
database, and SQLite needs no server.
"""

from tests.unit.db import test_database as on_sqlite

database = on_sqlite.database
test_sync_creates_schema_and_second_sync_is_noop = \
    on_sqlite.test_sync_creates_schema_and_second_sync_is_noop
test_models_match_migrations = on_sqlite.test_models_match_migrations
test_host_transitions_are_compare_and_swap = on_sqlite.test_host_transitions_are_compare_and_swap
test_decisions_last_cycles_and_prune = on_sqlite.test_decisions_last_cycles_and_prune
