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

"""Ratio history: instances never seen land are recorded at their launch's ratios."""

import datetime

from nova_drs.db import overcommit as db_overcommit
from nova_drs.overcommit import placement_sync

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0)


def test_history_keeps_changes_only_and_answers_by_time(database):
    assert db_overcommit.note_ratios(database, 'h', 1.0, 1.0, T0)
    assert not db_overcommit.note_ratios(database, 'h', 1.0, 1.0, T0 + datetime.timedelta(hours=1))
    assert db_overcommit.note_ratios(database, 'h', 2.0, 1.0, T0 + datetime.timedelta(hours=2))
    assert db_overcommit.ratios_at(database, 'h', T0 - datetime.timedelta(seconds=1)) is None
    assert db_overcommit.ratios_at(database, 'h', T0 + datetime.timedelta(hours=1)) == (1.0, 1.0)
    assert db_overcommit.ratios_at(database, 'h', T0 + datetime.timedelta(hours=3)) == (2.0, 1.0)
    assert db_overcommit.ratios_at(database, 'other', T0) is None


def test_reconcile_uses_launch_ratios_then_current(database):
    db_overcommit.note_ratios(database, 'h', 1.0, 1.0, T0)
    aware = (T0 + datetime.timedelta(minutes=5)).replace(tzinfo=datetime.timezone.utc)
    instances = [
        {'uuid': 'old', 'host': 'h', 'vcpus': 1, 'memory_mb': 64, 'launched_at': aware},
        {'uuid': 'before-history', 'host': 'h', 'vcpus': 1, 'memory_mb': 64,
         'launched_at': T0 - datetime.timedelta(days=1)},
    ]
    recorded, _gone = placement_sync.reconcile(database, instances, lambda host: (2.0, 1.5),
                                               hosts=['h', 'h2'])
    assert recorded == 2
    assert db_overcommit.get(database, 'old')['cpu_allocation_ratio'] == 1.0
    assert db_overcommit.get(database, 'before-history')['cpu_allocation_ratio'] == 2.0
    # the current ratios of every listed host entered the history
    assert db_overcommit.ratios_at(database, 'h2', datetime.datetime(2100, 1, 1)) == (2.0, 1.5)


def test_dry_run_writes_no_history(database):
    placement_sync.reconcile(database, [], lambda host: (2.0, 1.0), dry_run=True, hosts=['h'])
    assert db_overcommit.ratios_at(database, 'h', datetime.datetime(2100, 1, 1)) is None
