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

"""The orchestrator closes its move requests from what nova shows: done once
the server left, confirmed when cold, aborted when it overran, failed when
nova never moved it. The host lifecycle's evacuations are not its to close.

Real orchestrator and SQLite DRS database; nova is the stand-in of fakes.py
(fixtures: conftest.py); the clock is oslo's override.
"""

import types

from oslo_utils import timeutils

from nova_drs import exception
from nova_drs.daemon import orchestrator
from nova_drs.db import lb_migrations
from tests.unit.daemon.lifecycle_steps import in_state
from tests.unit.daemon.lifecycle_steps import requests

LIMITS = {'per_host': 5, 'per_destination': 5, 'per_cluster': 10,
          'suspends_per_cycle': 1, 'wakes_per_cycle': 1}
TIMEOUT = 300


def sent(database, nova, uuid, kind='live'):
    """vm uuid on h1, its move to h2 recorded and sent as the orchestrator does."""
    lb_migrations.request(database, uuid, 'h1', 'h2', kind, 'overload')
    (nova.live_migrate if kind == 'live' else nova.cold_migrate)(uuid, 'h2')


def settle(database, nova):
    orchestrator.Orchestrator(nova, database, LIMITS, 600, lambda: True).settle(
        types.SimpleNamespace(servers=nova.servers), TIMEOUT)
    return {r['instance_uuid']: r['status'] for r in requests(database)}


def test_a_move_that_arrived_or_whose_server_was_deleted_is_done(drs_db, nova):
    for uuid in ('vm1', 'vm2', 'vm3'):
        nova.add_server(uuid, 'h1')
        sent(drs_db, nova, uuid)
    nova.finish(['vm1', 'vm2'])
    del nova.servers['vm2']
    assert settle(drs_db, nova) == {'vm1': 'done', 'vm2': 'done', 'vm3': 'requested'}


def test_a_cold_move_is_confirmed_before_it_is_done(drs_db, nova):
    nova.add_server('vm1', 'h1', status='SHUTOFF')
    sent(drs_db, nova, 'vm1', kind='cold')
    nova.finish(['vm1'])
    nova.faults['confirm_resize'] = exception.NovaRequestFailed('HTTP 409', 409)
    assert settle(drs_db, nova) == {'vm1': 'requested'}
    del nova.faults['confirm_resize']
    assert settle(drs_db, nova) == {'vm1': 'done'}
    assert nova.servers['vm1']['status'] == 'SHUTOFF'
    assert nova.called('confirm_resize') == [('vm1',), ('vm1',)]


def test_a_move_that_overran_its_timeout_is_aborted(drs_db, nova):
    nova.add_server('vm1', 'h1')
    sent(drs_db, nova, 'vm1')
    timeutils.advance_time_seconds(TIMEOUT)
    assert settle(drs_db, nova) == {'vm1': 'requested'}
    timeutils.advance_time_seconds(1)
    assert settle(drs_db, nova) == {'vm1': 'aborted'}
    assert nova.called('abort_live_migration') == [('vm1', 1)]
    assert nova.servers['vm1']['OS-EXT-SRV-ATTR:host'] == 'h1'


def test_a_move_nova_never_carried_out_is_failed_after_30_seconds(drs_db, nova):
    nova.add_server('vm1', 'h1')
    sent(drs_db, nova, 'vm1')
    nova.fail('vm1')
    timeutils.advance_time_seconds(30)
    assert settle(drs_db, nova) == {'vm1': 'requested'}   # nova may not have begun yet
    timeutils.advance_time_seconds(1)
    assert settle(drs_db, nova) == {'vm1': 'failed'}


def test_an_evacuation_is_left_to_the_host_lifecycle(drs_db, nova):
    in_state(drs_db, 'h1', 'suspending')
    nova.add_server('vm1', 'h1')
    record = lb_migrations.request_at(drs_db, 'h1', 'suspending', 1, 'vm1', 'live', 'evac')
    assert record is not None
    del nova.servers['vm1']
    timeutils.advance_time_seconds(3600)
    assert settle(drs_db, nova) == {'vm1': 'requested'}
