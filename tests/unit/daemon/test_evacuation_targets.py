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

"""A suspend's servers go where the plan that started it sent them.

Left to nova's scheduler, they landed on hosts the same plan was about to
empty, which then kept a freshly moved server for the whole migration
cooldown (the closed-loop twin, doc/source/twin.md). The end to end effect
is measured by the twin; here each rule of the hand-over.
"""

import types

import pytest

from nova_drs import exception
from nova_drs.daemon import budget as budget_mod
from nova_drs.daemon import evacuation
from nova_drs.daemon import lifecycle
from nova_drs.db import hosts as drs_hosts
from tests.unit.daemon import lifecycle_steps

LIMITS = {'per_host': 10, 'per_destination': 1, 'per_cluster': 100,
          'suspends_per_cycle': 5, 'wakes_per_cycle': 5}


class Nova:
    """nova for one host being suspended with servers s1, s2 on it."""

    def __init__(self, refuse=()):
        self.refuse = set(refuse)   # hosts a named move to is refused (No valid host)
        self.moves = []

    def compute_service(self, host):
        return {'id': host, 'status': 'disabled', 'state': 'up'}

    def migrations(self, **filters):
        return []

    def servers_on_host(self, host):
        return [{'id': uuid, 'status': 'ACTIVE', 'OS-EXT-STS:task_state': None,
                 'metadata': {}} for uuid in ('s1', 's2')]

    def live_migrate(self, server_id, host=None):
        self.moves.append((server_id, host))
        if host in self.refuse:
            raise exception.NovaRequestFailed('No valid host was found.', 400)


class Driver:
    def can_suspend(self, options):
        return True

    can_wake = can_suspend


@pytest.fixture
def database(database):
    """The unit tier's database with host src suspending."""
    lifecycle_steps.suspending(database, 'src')
    return database


def _advance(database, nova, targets, receivers=('a', 'b'), busy=()):
    steps = lifecycle.HostLifecycle(
        nova, database, lambda record: (Driver(), types.SimpleNamespace(options={})),
        suspend_timeout=600, wake_timeout=600, migration_timeout=600, targets=targets)
    steps.budget = budget_mod.Budget(LIMITS, lambda host: 'c', busy, receivers)
    [record] = [r for r in drs_hosts.list_with_power(database, busy_only=True)]
    steps.advance(record)
    return nova.moves


def _targets(**destinations):
    targets = evacuation.Targets()
    targets.remember(types.SimpleNamespace(instance=uuid, source='src', destination=dest)
                     for uuid, dest in destinations.items())
    return targets


def test_each_server_is_sent_to_its_planned_destination(database):
    assert _advance(database, Nova(), _targets(s1='a', s2='b')) == [('s1', 'a'), ('s2', 'b')]


def test_a_destination_at_its_limit_makes_the_server_wait(database):
    # a already receives its one migration: s1 waits for it, s2 goes to b.
    targets = _targets(s1='a', s2='b')
    moves = _advance(database, Nova(), targets, busy=[('other', 'a')])
    assert moves == []      # the evacuation stops at the first server that waits
    assert targets.of('s1', 'src') == 'a'


def test_a_refused_destination_leaves_the_choice_to_nova(database):
    targets = _targets(s1='a', s2='b')
    moves = _advance(database, Nova(refuse={'a'}), targets)
    assert moves == [('s1', 'a'), ('s1', None), ('s2', 'b')]
    assert targets.of('s1', 'src') is None


def test_a_destination_that_no_longer_receives_is_dropped(database):
    # b was disabled or is being emptied since the plan: nova's scheduler chooses.
    assert _advance(database, Nova(), _targets(s1='a', s2='b'), receivers=('a', 'c')) == \
        [('s1', 'a'), ('s2', None)]


def test_servers_without_a_target_go_where_nova_chooses(database):
    assert _advance(database, Nova(), evacuation.Targets()) == [('s1', None), ('s2', None)]


def test_targets_belong_to_their_source_and_are_forgotten_with_it():
    targets = _targets(s1='a')
    assert targets.of('s1', 'elsewhere') is None
    targets.retain({'other'})
    assert targets.of('s1', 'src') is None

