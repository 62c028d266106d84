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

"""Servers on a host being emptied still need a place: the plan counts them
on the active hosts, so it does not empty a second host onto their capacity
(``make demo`` once suspended two of four hosts at once and ran the
survivors at 120 %)."""

import pytest

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes


def _cloud(leaving_state):
    """Three active hosts at 50 % and h3 (``leaving_state``) with 40 % to hand over."""
    hosts = [fakes.host('h%d' % k) for k in range(3)]
    hosts.append(fakes.host('h3', power_state=leaving_state))
    instances = [fakes.vm('a%d-%d' % (k, n), 'h%d' % k, demand=1.0, mips=250.0)
                 for k in range(3) for n in range(2)]
    instances += [fakes.vm('leaving%d' % n, 'h3', demand=1.0, mips=100.0) for n in range(4)]
    return hosts, instances


def _suspends(leaving_state):
    hosts, instances = _cloud(leaving_state)
    plan = planner.plan(fakes.snapshot(hosts, instances), catalog.by_name('drs'),
                        model.SafetyLimits(1, 0), suspend_idle=True)
    return [a.host for a in plan.actions if isinstance(a, model.Suspend)]


def test_a_second_host_is_not_emptied_onto_the_load_still_arriving():
    # With h3 asleep the three at 50 % can shed one; with h3's 400 MIPS still
    # to land on them they cannot (each would end above the 90 % target).
    assert _suspends(model.SUSPENDED) != []
    assert _suspends(model.SUSPENDING) == []
    assert _suspends(model.ENTERING_MAINTENANCE) == []


@pytest.mark.parametrize('leaving_state', [model.SUSPENDING, model.ENTERING_MAINTENANCE])
def test_leaving_servers_are_reserved_where_most_cpu_is_spare(leaving_state):
    hosts, instances = _cloud(leaving_state)
    state = fakes.working(hosts, instances)
    landed = {state.uuids[j]: state.host_names[i] for j, i in state.arrivals}
    assert sorted(landed) == ['leaving%d' % n for n in range(4)]
    assert set(landed.values()) == {'h0', 'h1', 'h2'}     # spread, not piled up
    assert sorted(state.demand[:3]) == [600.0, 600.0, 700.0]
    assert state.start_demand[:3] == state.demand[:3]
    # Nothing moves in the plan for them: the host lifecycle moves them.
    assert state.moves == []
    assert {state.host_names[state.vm_host[state.vm_index[u]]] for u in landed} == {'h3'}


def test_a_server_that_fits_nowhere_reserves_nothing():
    hosts = [fakes.host('h0', ram_mb=1024), fakes.host('h1', power_state=model.SUSPENDING)]
    instances = [fakes.vm('big', 'h1', ram_mb=4096)]
    assert fakes.working(hosts, instances).arrivals == []


def test_servers_stay_in_their_cluster():
    hosts = [fakes.host('h0', cluster='a'), fakes.host('h1', cluster='b'),
             fakes.host('h2', cluster='b', power_state=model.SUSPENDING)]
    state = fakes.working(hosts, [fakes.vm('v', 'h2')])
    assert [state.host_names[i] for _j, i in state.arrivals] == ['h1']


def test_a_leaving_server_already_moving_is_reserved_once_at_its_destination():
    # leaving0 is migrating (or about to, to the destination its suspend's plan
    # chose) to h2: it counts on h2 only, not on h2 and again on a guess.
    hosts, instances = _cloud(model.SUSPENDING)
    state = fakes.working(hosts, instances,
                          [model.InFlightMigration('leaving0', 'h3', 'h2')])
    assert sorted(state.uuids[j] for j, _i in state.arrivals) == \
        ['leaving1', 'leaving2', 'leaving3']
    assert sum(state.demand[:3]) == 3 * 500.0 + 4 * 100.0
