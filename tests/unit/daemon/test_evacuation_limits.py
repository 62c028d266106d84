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

"""Evacuations (nova chooses the destination) against max_migrations_per_destination,
and the backoff of a failed maintenance move."""

import datetime
import types

from nova_drs.daemon import budget as budget_mod
from nova_drs.daemon import evacuation

LIMITS = {'per_host': 10, 'per_destination': 2, 'per_cluster': 100,
          'suspends_per_cycle': 1, 'wakes_per_cycle': 1}


def _raw(services, records=None, migrations=()):
    return types.SimpleNamespace(
        services={host: {'status': status, 'state': 'up'} for host, status in services.items()},
        records=records or {}, migrations=list(migrations), requests=[], aggregates=[])


def test_evacuations_stop_when_every_destination_is_full():
    # Two hosts can receive (2 slots each); the third is the source, disabled.
    raw = _raw({'src': 'disabled', 'a': 'enabled', 'b': 'enabled'})
    budget = budget_mod.budget_for(raw, LIMITS, {})
    admitted = [budget.admit_evacuation('src') for _ in range(6)]
    # Wherever nova puts them, no host gets more than 2: 4 start, 2 wait.
    assert admitted == [True] * 4 + [False] * 2
    assert budget.migration_refused('src') == \
        'every possible destination at its migration limit'


def test_placed_migrations_use_their_destination_slots():
    # Next cycle nova's records name the destinations: a is full, b has one slot.
    moving = [{'status': 'running', 'source_compute': 'src', 'dest_compute': dest,
               'instance_uuid': uuid} for uuid, dest in (('1', 'a'), ('2', 'a'), ('3', 'b'))]
    raw = _raw({'src': 'disabled', 'a': 'enabled', 'b': 'enabled'}, migrations=moving)
    budget = budget_mod.budget_for(raw, LIMITS, {})
    assert [budget.admit_evacuation('src') for _ in range(2)] == [True, False]
    # A move the planner sends names its destination: counted exactly.
    assert budget.migration_refused('x', 'a') == 'destination at its migration limit'


def test_suspended_maintenance_and_disabled_hosts_receive_nothing():
    raw = _raw({'src': 'disabled', 'a': 'enabled', 'b': 'enabled', 'c': 'disabled'},
               records={'b': {'suspend_state': 'waking'}})
    budget = budget_mod.budget_for(raw, LIMITS, {})
    assert [budget.admit_evacuation('src') for _ in range(3)] == [True, True, False]


def test_a_planned_move_takes_a_slot_from_evacuations():
    raw = _raw({'src': 'disabled', 'a': 'enabled'})
    budget = budget_mod.budget_for(raw, LIMITS, {})
    budget.take_migration('x', 'a')
    assert [budget.admit_evacuation('src') for _ in range(2)] == [True, False]


def test_without_receivers_evacuations_are_bounded_by_source_and_cluster():
    budget = budget_mod.Budget(LIMITS, lambda host: 'c', ())
    assert sum(budget.admit_evacuation('src') for _ in range(20)) == LIMITS['per_host']


def test_retry_delay_doubles_up_to_its_bound():
    delays = [evacuation.retry_delay(n).total_seconds() for n in (1, 2, 3, 7, 8, 100)]
    assert delays == [30, 60, 120, 1800, 1800, 1800]
    assert evacuation.LAST_RETRY == datetime.timedelta(minutes=30)


def test_nowhere_to_go_only_when_no_host_can_receive():
    alone = budget_mod.budget_for(_raw({'src': 'disabled', 'a': 'disabled'}), LIMITS, {})
    assert alone.nowhere_to_go()
    full = budget_mod.budget_for(_raw({'src': 'disabled', 'a': 'enabled'}), LIMITS, {})
    full.take_migration('x', 'a')
    full.take_migration('x', 'a')
    # a is busy, not missing: the evacuation waits for a slot, nothing is woken.
    assert not full.nowhere_to_go()
    assert not full.admit_evacuation('src')
    assert not budget_mod.Budget(LIMITS, lambda host: 'c', ()).nowhere_to_go()


def test_a_host_woken_this_cycle_receives_at_once():
    # b was suspended when the cycle observed; the lifecycle woke it since.
    raw = _raw({'src': 'disabled', 'b': 'disabled'}, records={'b': {'suspend_state': 'waking'}})
    budget = budget_mod.budget_for(raw, LIMITS, {})
    assert budget.nowhere_to_go()
    budget.woke('b')
    budget.woke('b')
    assert not budget.nowhere_to_go()
    assert [budget.admit_evacuation('src') for _ in range(3)] == [True, True, False]


def test_evacuation_moves_have_their_own_metric_reason():
    from nova_drs.observability import metrics
    # The reason evacuation._move_one records: 'evacuating host for <phase>'.
    assert [metrics.REASONS.get('evacuating host for %s' % phase, 'other')
            for phase in ('suspend', 'maintenance')] == ['evacuate', 'maintenance']
