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

"""Entering maintenance: the host is emptied as for a suspend, but a move
that fails keeps it trying (after a growing delay) and wakes a suspended host
of the cluster to make room; it is never powered off.

Real host lifecycle and SQLite DRS database; nova and the power driver are
the stand-ins of fakes.py (fixtures: conftest.py).
"""

from oslo_utils import timeutils

from nova_drs import cluster_policy
from nova_drs import opt_out
from nova_drs.daemon import budget as budget_mod
from nova_drs.db import hosts as drs_hosts
from tests.unit.daemon.lifecycle_steps import host_lifecycle
from tests.unit.daemon.lifecycle_steps import in_state
from tests.unit.daemon.lifecycle_steps import step

LIMITS = {'per_host': 10, 'per_destination': 10, 'per_cluster': 10,
          'suspends_per_cycle': 1, 'wakes_per_cycle': 1}


def entering_maintenance(database, host='h1'):
    in_state(database, host, drs_hosts.ENTERING_MAINTENANCE)


def asleep(database, *hosts):
    for host in hosts:
        in_state(database, host, drs_hosts.SUSPENDING, drs_hosts.SUSPENDED)


def emptying(nova, database, power):
    """The lifecycle of h1 entering maintenance with vm1 on it, h3 asleep: a
    host that could be woken to make room."""
    entering_maintenance(database)
    asleep(database, 'h3')
    nova.add_server('vm1', 'h1')
    return host_lifecycle(nova, database, power)


def budget(receivers, wakes=1):
    return budget_mod.Budget(dict(LIMITS, wakes_per_cycle=wakes),
                             lambda host: cluster_policy.DEFAULT_CLUSTER, (), receivers)


def test_an_emptied_host_enters_maintenance_disabled_and_powered_on(drs_db, nova, power):
    entering_maintenance(drs_db)
    nova.add_server('vm1', 'h1', extra_specs={opt_out.KEY: opt_out.DISABLED})
    steps = host_lifecycle(nova, drs_db, power)
    step(steps)
    assert nova.requests == [('vm1', None)]      # an admin's maintenance moves it anyway
    assert nova.services['h1']['disabled_reason'] == 'nova-drs: host in maintenance'
    nova.finish(['vm1'])
    record = step(steps)
    assert record['suspend_state'] == drs_hosts.MAINTENANCE
    assert nova.services['h1']['status'] == 'disabled'
    assert power.calls == []


def test_a_failed_move_wakes_a_host_and_is_retried_after_its_delay(drs_db, nova, power):
    steps = emptying(nova, drs_db, power)
    step(steps)
    nova.fail('vm1')
    record = step(steps)
    assert record['suspend_state'] == drs_hosts.ENTERING_MAINTENANCE
    assert record['state_reason'] == (
        'cannot enter maintenance yet: migration of vm1 failed; it stays on h1; '
        'woke h3 to make room; next try in 30s')
    assert drs_hosts.get(drs_db, 'h3')['suspend_state'] == drs_hosts.WAKING
    timeutils.advance_time_seconds(29)
    step(steps)
    assert len(nova.requests) == 1               # backing off: not asked again yet
    timeutils.advance_time_seconds(2)
    step(steps)
    assert nova.requests == [('vm1', None), ('vm1', None)]
    assert power.calls == []


def test_with_nowhere_to_go_a_host_is_woken_instead_of_asking_nova(drs_db, nova, power):
    entering_maintenance(drs_db)
    asleep(drs_db, 'h3', 'h4')
    nova.add_server('vm1', 'h1')
    steps = host_lifecycle(nova, drs_db, power)
    steps.budget = budget(receivers=())
    record = step(steps)
    assert nova.requests == []
    assert record['state_reason'] == ('cannot enter maintenance yet: no other host can '
                                      'receive servers; woke h3 to make room')
    # One wake at a time: while h3 wakes, h4 stays asleep.
    steps.budget = budget(receivers=())
    record = step(steps)
    assert 'waiting for h3 to wake to make room' in record['state_reason']
    assert drs_hosts.states(drs_db)['h4'] == drs_hosts.SUSPENDED
    assert nova.requests == []


def test_a_wake_to_make_room_respects_the_cycles_wake_limit(drs_db, nova, power):
    steps = emptying(nova, drs_db, power)
    steps.budget = budget(receivers=(), wakes=0)
    record = step(steps)
    assert 'waking h3 to make room waits: cluster at its wake limit' in record['state_reason']
    assert drs_hosts.states(drs_db)['h3'] == drs_hosts.SUSPENDED


def test_a_host_nova_knows_no_service_of_stays_entering_maintenance(drs_db, nova, power):
    entering_maintenance(drs_db)
    del nova.services['h1']
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ENTERING_MAINTENANCE
    assert record['state_reason'] == \
        'cannot enter maintenance yet: nova knows no compute service on h1'
