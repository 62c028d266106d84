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

import pytest

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes


def plan(hosts, instances, migrations=()):
    return planner.plan(fakes.snapshot(hosts, instances, migrations), catalog.by_name('drs'))


def test_instance_on_unknown_host_is_refused_naming_it():
    with pytest.raises(model.InvalidSnapshot, match='instance v1: on unknown host .ghost.'):
        plan([fakes.host('h1')], [fakes.vm('v1', 'ghost')])


def test_negative_capacity_is_refused():
    with pytest.raises(model.InvalidSnapshot, match='host h1: negative ram_mb'):
        plan([fakes.host('h1', ram_mb=-1)], [])


def test_duplicates_are_refused():
    with pytest.raises(model.InvalidSnapshot, match='duplicate host'):
        plan([fakes.host('h1'), fakes.host('h1')], [])
    with pytest.raises(model.InvalidSnapshot, match='instance v1: duplicate'):
        plan([fakes.host('h1')], [fakes.vm('v1', 'h1'), fakes.vm('v1', 'h1')])


@pytest.mark.parametrize('history', [(0.1, -0.2), (0.1, float('nan')), ('x',)])
def test_bad_history_is_refused(history):
    with pytest.raises(model.InvalidSnapshot, match='instance v1: cpu_history'):
        plan([fakes.host('h1')], [fakes.vm('v1', 'h1', history=history)])


def test_migration_of_unknown_instance_is_refused():
    with pytest.raises(model.InvalidSnapshot, match='migration of v9: unknown instance'):
        plan([fakes.host('h1')], [], [model.InFlightMigration('v9', 'h1', 'h1')])


def test_unknown_power_state_is_refused():
    with pytest.raises(model.InvalidSnapshot, match='unknown power state'):
        plan([fakes.host('h1', power_state='sleepy')], [])


def test_plan_groups_actions():
    actions = (model.Wake('a', 'capacity'), model.Migrate('v', 'b', 'a', 'overload'),
               model.Suspend('b', 'underload'))
    built = model.Plan(actions)
    assert built.wakes == actions[:1]
    assert built.migrations == actions[1:2]
    assert built.suspends == actions[2:]
