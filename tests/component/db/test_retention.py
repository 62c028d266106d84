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

"""Retention of the history tables on the real MariaDB.

The tests are tests/unit/db/test_retention.py's, run again here with a
MariaDB ``database``.
"""

import pytest

from tests import services
from tests.unit.db import test_retention as on_sqlite


@pytest.fixture(params=['mariadb'])
def database(request):
    with services.scratch_database(request.param, sync=True) as db:
        yield db


test_purge_keeps_what_live_logic_reads = on_sqlite.test_purge_keeps_what_live_logic_reads
test_backlog_is_deleted_in_short_batches = on_sqlite.test_backlog_is_deleted_in_short_batches
test_records_of_removed_computes_go_after_the_grace_only_when_active = \
    on_sqlite.test_records_of_removed_computes_go_after_the_grace_only_when_active
test_a_host_that_moved_since_the_check_is_not_deleted = \
    on_sqlite.test_a_host_that_moved_since_the_check_is_not_deleted
test_daemon_purge_runs_once_per_interval_and_never_raises = \
    on_sqlite.test_daemon_purge_runs_once_per_interval_and_never_raises
test_metrics_count_a_bounded_window = on_sqlite.test_metrics_count_a_bounded_window
