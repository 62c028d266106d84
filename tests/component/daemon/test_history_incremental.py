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

"""The daemon's statistics history, topped up from the real MariaDB and PostgreSQL.

tests/unit/daemon/test_history_incremental.py's tests run again here on the
servers, and the read of a row committed after a higher id: writers that
commit concurrently, which SQLite has not.
"""

import pytest

from nova_drs.daemon import stats_history
from nova_drs.db import statistics as db_statistics
from tests import services
from tests.unit.daemon import test_history_incremental as on_sqlite
from tests.unit.daemon.test_history_incremental import _history
from tests.unit.daemon.test_history_incremental import _store
from tests.unit.daemon.test_history_incremental import T0


@pytest.fixture(params=['mariadb', 'postgresql'])
def database(request):
    with services.scratch_database(request.param, sync=True) as db:
        yield db


test_a_steady_read_takes_each_sample_once = on_sqlite.test_a_steady_read_takes_each_sample_once
test_a_clock_ahead_and_a_backlog_hide_no_host = \
    on_sqlite.test_a_clock_ahead_and_a_backlog_hide_no_host
test_a_host_whose_samples_stop_goes_stale_and_restart_rebuilds = \
    on_sqlite.test_a_host_whose_samples_stop_goes_stale_and_restart_rebuilds
test_ids_given_out_again_read_the_history_again = \
    on_sqlite.test_ids_given_out_again_read_the_history_again


def test_a_row_committed_after_a_higher_id_is_read(database):
    _store(database, 'h1', 0)
    history = _history(database)
    late = database.engine.connect()
    try:
        transaction = late.begin()
        late.execute(db_statistics.HOSTS.insert().values(
            host='h2', sampled_at=T0, cpu_used_percent=20.0, deleted=0,
            created_at=db_statistics.server_utc_now()))   # takes an id, not committed
        _store(database, 'h1', 1)                         # a higher id, committed
        stats_history.read_statistics(database, history)
        assert 'h2' not in history.hosts and len(history.hosts['h1']) == 2
        assert history.host_ids.gaps
        transaction.commit()
    finally:
        late.close()
    stats_history.read_statistics(database, history)
    assert history.hosts['h2'] == ((T0, 0.2),)
    assert not history.host_ids.gaps
