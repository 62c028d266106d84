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

"""Emptying a host for a suspend: what nova reports of each server decides
whether it moves, waits, or stops the suspend with the host back in service.

Real host lifecycle (evacuation steps) and SQLite DRS database; nova and the
power driver are the stand-ins of fakes.py (fixtures: conftest.py).
"""

import collections

from oslo_utils import timeutils
import pytest

from nova_drs import cluster_policy
from nova_drs import exception
from nova_drs import opt_out
from nova_drs.daemon import budget as budget_mod
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from tests.unit.daemon.lifecycle_steps import host_lifecycle
from tests.unit.daemon.lifecycle_steps import MIGRATION_TIMEOUT
from tests.unit.daemon.lifecycle_steps import past
from tests.unit.daemon.lifecycle_steps import requests
from tests.unit.daemon.lifecycle_steps import started
from tests.unit.daemon.lifecycle_steps import step
from tests.unit.daemon.lifecycle_steps import suspending

OPTED_OUT = {opt_out.KEY: opt_out.DISABLED}


def rows(database):
    return [(r['instance_uuid'], r['status']) for r in requests(database)]


def test_a_server_busy_with_a_task_of_its_own_is_not_moved(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1', task='rebooting')
    nova.add_server('vm2', 'h1')
    steps = host_lifecycle(nova, drs_db, power)
    step(steps)
    assert nova.requests == [('vm2', None)]          # vm1 waits, the others go on
    nova.finish(['vm2'])
    for _ in range(3):
        record = step(steps)
    assert nova.requests == [('vm2', None)]
    assert (record['suspend_state'], power.calls) == (drs_hosts.SUSPENDING, [])


def test_a_server_in_error_is_not_moved_and_the_suspend_is_abandoned(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1', status='ERROR')
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'server vm1 is ERROR and cannot be moved' in record['state_reason']
    assert not nova.requests and not power.calls
    assert nova.services['h1']['status'] == 'enabled'


def test_a_failed_evacuation_migration_puts_the_host_back_in_service(drs_db, nova, power):
    steps = started(nova, drs_db, power)
    nova.fail('vm1')
    record = step(steps)
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert record['state_reason'] == \
        'suspend abandoned: migration of vm1 failed; it stays on h1'
    assert rows(drs_db) == [('vm1', 'failed')]
    assert nova.services['h1']['status'] == 'enabled' and not record['disabled_by_drs']
    assert power.calls == []
    assert nova.requests == [('vm1', None)]          # not asked again for this suspend


def test_a_migration_that_overran_is_aborted_and_the_suspend_abandoned(drs_db, nova, power):
    steps = started(nova, drs_db, power)
    record = past(steps, MIGRATION_TIMEOUT)
    assert nova.called('abort_live_migration') == [('vm1', 1)]
    assert nova.servers['vm1']['OS-EXT-SRV-ATTR:host'] == 'h1'
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'migration of vm1 timed out' in record['state_reason']
    assert rows(drs_db) == [('vm1', 'aborted')]


def test_an_overran_migration_nova_cannot_abort_still_abandons_the_suspend(
        drs_db, nova, power):
    steps = started(nova, drs_db, power)
    nova.faults['abort_live_migration'] = exception.NovaRequestFailed('HTTP 400', 400)
    timeutils.advance_time_seconds(MIGRATION_TIMEOUT + 1)
    assert step(steps)['suspend_state'] == drs_hosts.ACTIVE
    assert rows(drs_db) == [('vm1', 'aborted')]


def test_a_move_recorded_but_never_sent_is_asked_again(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')

    def crash(point):
        if point == 'suspend:migration-recorded':
            raise RuntimeError('the daemon died')

    with pytest.raises(RuntimeError):
        step(host_lifecycle(nova, drs_db, power, crash_point=crash))
    assert nova.requests == [] and rows(drs_db) == [('vm1', 'requested')]
    step(host_lifecycle(nova, drs_db, power))
    assert nova.requests == [('vm1', None)]
    assert rows(drs_db) == [('vm1', 'aborted'), ('vm1', 'requested')]


def test_a_move_nova_refuses_abandons_the_suspend(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')
    nova.faults['live_migrate'] = exception.NovaRequestFailed('No valid host was found', 400)
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'nova refused to move vm1' in record['state_reason']
    assert rows(drs_db) == [('vm1', 'failed')]


def test_an_error_answer_abandons_the_suspend_and_reaches_the_cycle(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')
    nova.faults['live_migrate'] = exception.NovaUnavailable('POST /servers: HTTP 503', 503)
    with pytest.raises(exception.NovaUnavailable):
        step(host_lifecycle(nova, drs_db, power))
    record = drs_hosts.get(drs_db, 'h1')
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'nova failed to move vm1' in record['state_reason']
    assert rows(drs_db) == [('vm1', 'failed')]
    assert nova.services['h1']['status'] == 'enabled'


def test_no_answer_leaves_the_move_open_and_the_next_cycle_asks_nova(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')
    nova.faults['live_migrate'] = exception.NovaUnavailable('POST /servers: timed out')
    steps = host_lifecycle(nova, drs_db, power)
    with pytest.raises(exception.NovaUnavailable):
        step(steps)
    assert drs_hosts.get(drs_db, 'h1')['suspend_state'] == drs_hosts.SUSPENDING
    assert rows(drs_db) == [('vm1', 'requested')]
    del nova.faults['live_migrate']
    step(steps)          # nova has no record of it: asked again, once
    assert nova.called('live_migrate') == [('vm1', None), ('vm1', None)]
    assert nova.requests == [('vm1', None)]
    assert rows(drs_db) == [('vm1', 'aborted'), ('vm1', 'requested')]


def test_a_move_nova_took_is_followed_not_asked_twice(drs_db, nova, power):
    steps = started(nova, drs_db, power)
    # nova took it, the server shows no task state yet (the conductor's queue).
    nova.servers['vm1'].update({'status': 'ACTIVE', 'OS-EXT-STS:task_state': None})
    assert step(steps)['suspend_state'] == drs_hosts.SUSPENDING
    assert nova.requests == [('vm1', None)]
    assert rows(drs_db) == [('vm1', 'requested')]


def test_a_stopped_server_is_cold_migrated_and_its_resize_confirmed(drs_db, nova, power):
    steps = started(nova, drs_db, power, status='SHUTOFF')
    assert nova.called('cold_migrate') == [('vm1', None)]
    nova.finish(['vm1'])
    assert nova.servers['vm1']['status'] == 'VERIFY_RESIZE'
    nova.faults['confirm_resize'] = exception.NovaRequestFailed('HTTP 409', 409)
    step(steps)
    # Off the host, but placement still holds its allocation there: not powered off.
    assert rows(drs_db) == [('vm1', 'done')]
    assert power.calls == []
    del nova.faults['confirm_resize']
    step(steps)
    assert nova.servers['vm1']['status'] == 'SHUTOFF'   # never left in VERIFY_RESIZE
    assert power.calls == [('suspend', 'h1')]


def test_an_opted_out_server_abandons_a_suspend(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1', extra_specs=OPTED_OUT)
    nova.add_server('vm2', 'h1')
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'servers opted out of DRS (drs:automation=disabled): vm1' in record['state_reason']
    assert nova.requests == []


def test_a_forced_suspend_moves_opted_out_servers_too(drs_db, nova, power):
    suspending(drs_db, reason='admin suspend, %s' % opt_out.FORCED)
    nova.add_server('vm1', 'h1', extra_specs=OPTED_OUT)
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.SUSPENDING
    assert nova.requests == [('vm1', None)]


def test_evacuations_stay_within_the_per_host_limit_each_cycle(drs_db, nova, power):
    suspending(drs_db)
    for i in range(5):
        nova.add_server('vm%d' % i, 'h1')
    steps = host_lifecycle(nova, drs_db, power)
    limits = {'per_host': 2, 'per_destination': 10, 'per_cluster': 10,
              'suspends_per_cycle': 1, 'wakes_per_cycle': 1}
    per_cycle = []
    while nova.servers_on_host('h1') and len(per_cycle) < 10:
        steps.budget = budget_mod.Budget(limits, lambda host: cluster_policy.DEFAULT_CLUSTER,
                                         nova.in_flight())
        asked = len(nova.requests)
        step(steps)
        per_cycle.append(len(nova.requests) - asked)
        nova.finish(list(nova.running))
    assert per_cycle == [2, 2, 1]
    assert collections.Counter(uuid for uuid, _ in nova.requests) == {
        'vm%d' % i: 1 for i in range(5)}


def test_an_abandoned_cold_migration_is_confirmed_once_nova_finishes_it(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1', status='SHUTOFF')
    nova.add_server('vm2', 'h1', status='ERROR')
    steps = host_lifecycle(nova, drs_db, power)
    assert step(steps)['suspend_state'] == drs_hosts.ACTIVE
    # vm1's cold migration was under way: its row stays open until it ends.
    assert rows(drs_db) == [('vm1', 'requested')]
    steps.close_abandoned_evacuations()
    assert rows(drs_db) == [('vm1', 'requested')]
    nova.finish(['vm1'])
    nova.faults['confirm_resize'] = exception.NovaRequestFailed('HTTP 409', 409)
    steps.close_abandoned_evacuations()
    assert rows(drs_db) == [('vm1', 'requested')]
    del nova.faults['confirm_resize']
    steps.close_abandoned_evacuations()
    assert nova.servers['vm1']['status'] == 'SHUTOFF'
    assert rows(drs_db) == [('vm1', 'cancelled')]


def test_an_abandoned_cold_migration_of_a_deleted_server_is_closed(drs_db, nova, power):
    steps = started(nova, drs_db, power, status='SHUTOFF')
    drs_hosts.transition(drs_db, 'h1', drs_hosts.SUSPENDING, drs_hosts.ACTIVE, 'cancelled')
    del nova.servers['vm1']
    steps.close_abandoned_evacuations()
    assert rows(drs_db) == [('vm1', 'cancelled')]
    assert lb_migrations.open_requests(drs_db) == []
