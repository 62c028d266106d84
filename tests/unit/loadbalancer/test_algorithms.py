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

"""Hand-computed cases for VM selection, placement and underload order."""

import random

import pytest

from nova_drs import loadbalancer_plugins
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import overload
from nova_drs.loadbalancer import placement
from nova_drs.loadbalancer import power
from nova_drs.loadbalancer import selection
from nova_drs.loadbalancer import underload
from tests.unit.loadbalancer import fakes


def crowded():
    return fakes.working([fakes.host('h', mips=1000.0)], [
        fakes.vm('big', 'h', demand=0.9, mips=500.0, ram_mb=2048),
        fakes.vm('small', 'h', demand=0.5, mips=200.0, ram_mb=512),
        fakes.vm('idle', 'h', demand=0.1, mips=400.0, ram_mb=1024),
    ])


def test_mmt_picks_least_ram():
    state = crowded()
    assert state.uuids[selection.MinimumMigrationTime().select(state, 0, None)] == 'small'


def test_mu_picks_least_cpu_demand():
    state = crowded()   # demands: 450, 100, 40 MIPS
    assert state.uuids[selection.MinimumUtilisation().select(state, 0, None)] == 'idle'


def test_rs_is_deterministic_for_a_seed():
    state = crowded()
    picks = {selection.RandomSelection().select(state, 0, random.Random(7)) for _ in range(5)}
    assert len(picks) == 1


def test_mc_falls_back_to_mmt_without_enough_history():
    state = crowded()
    assert state.uuids[selection.MaximumCorrelation().select(state, 0, None)] == 'small'


def test_mc_picks_the_best_explained_instance():
    base = [0.1, 0.5, 0.2, 0.8, 0.3, 0.9, 0.4, 0.6]
    noise = [0.3, 0.31, 0.29, 0.3, 0.32, 0.28, 0.3, 0.31]
    state = fakes.working([fakes.host('h', mips=1000.0)], [
        fakes.vm('a', 'h', history=base),
        fakes.vm('b', 'h', history=[x * 0.5 + 0.1 for x in base]),
        fakes.vm('c', 'h', history=noise),
    ])
    assert state.uuids[selection.MaximumCorrelation().select(state, 0, None)] in ('a', 'b')


def test_selection_skips_unmovable_instances():
    state = fakes.working([fakes.host('h')], [fakes.vm('v', 'h', state='paused')])
    assert selection.MinimumMigrationTime().select(state, 0, None) is None


def test_pabfd_takes_least_power_increase():
    curve = power.HP_ML110_G5
    hosts = [fakes.host('busy', mips=1000.0, power_curve=curve),
             fakes.host('quiet', mips=1000.0, power_curve=curve),
             fakes.host('off', mips=1000.0, power_curve=curve, power_state=model.SUSPENDED)]
    state = fakes.working(hosts, [fakes.vm('a', 'busy', demand=0.5, mips=1000.0),
                                  fakes.vm('b', 'quiet', demand=0.35, mips=1000.0)])
    j = state.add_unplaced(fakes.vm('n', 'busy', demand=1.0, mips=100.0))
    # +10 %: busy 50->60 % costs 121-116 = 5 W; quiet 35->45 % costs
    # 113-107.5 = 5.5 W; off 0->10 % costs 97-93.7 = 3.3 W.
    pabfd = placement.PowerAwareBestFit(overload.StaticThreshold(0.8))
    assert state.host_names[pabfd.find_host(state, j, set())] == 'off'
    assert state.host_names[pabfd.find_host(state, j, set(), allow_wake=False)] == 'busy'
    assert state.host_names[pabfd.find_host(state, j, {0}, allow_wake=False)] == 'quiet'


def test_pabfd_skips_hosts_that_would_be_overloaded():
    state = fakes.working([fakes.host('a', mips=1000.0), fakes.host('b', mips=1000.0)],
                          [fakes.vm('x', 'a', demand=0.75, mips=1000.0),
                           fakes.vm('y', 'b', demand=0.2, mips=1000.0)])
    j = state.add_unplaced(fakes.vm('n', 'a', demand=1.0, mips=100.0))
    pabfd = placement.PowerAwareBestFit(overload.StaticThreshold(0.8))
    assert state.host_names[pabfd.find_host(state, j, set())] == 'b'   # a would be 85 %


def test_least_utilised_orders_hosts_and_skips_idle_and_full():
    hosts = [fakes.host(n, mips=1000.0) for n in ('h0', 'h1', 'h2', 'h3')]
    state = fakes.working(hosts, [fakes.vm('a', 'h0', demand=0.0),
                                  fakes.vm('b', 'h1', demand=1.0, mips=600.0),
                                  fakes.vm('c', 'h2', demand=1.0, mips=200.0),
                                  fakes.vm('d', 'h3', demand=1.0, mips=1000.0)])
    assert underload.LeastUtilised().candidates(state, set()) == [2, 1]


def test_mean_below_threshold_uses_history_mean_or_ram():
    hosts = [fakes.host('low', ram_mb=10000), fakes.host('high', ram_mb=1000)]
    state = fakes.working(hosts, [
        fakes.vm('a', 'low', mips=1000.0, ram_mb=5000, history=[0.1, 0.2, 0.3]),  # mean 0.2
        fakes.vm('b', 'high', mips=1000.0, ram_mb=900, history=[0.9, 0.9]),
    ])
    rule = loadbalancer_plugins.build('underload', 'mean_threshold', {'cpu': 0.25})
    assert rule.candidates(state, set()) == [0]
    assert loadbalancer_plugins.build('underload', 'mean_threshold',
                                      {'cpu': 0.1, 'memory': 0.6}).candidates(state, set()) == [0]


def test_power_interpolates_between_spec_points():
    assert power.power(power.HP_ML110_G4, 0.0) == 86.0
    assert power.power(power.HP_ML110_G4, 0.15) == pytest.approx((89.4 + 92.6) / 2)
    assert power.power(power.HP_ML110_G4, 1.0) == 117.0
