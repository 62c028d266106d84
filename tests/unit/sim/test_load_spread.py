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

"""The load-spread metric and the scenario options of the even benchmark."""

import pytest

from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import power
from nova_drs.sim import datacenter
from nova_drs.sim import engine
from nova_drs.sim import metrics
from nova_drs.sim import traces
from tests.unit.sim.test_sim import write_traces


def spread(powered):
    acc = metrics.Accumulator(2, 1, [power.HP_ML110_G4] * 2, [1000.0, 1000.0])
    acc.step([(0.0, [(500.0, 500.0), (0.0, 0.0)])], [(500.0, 500.0), (0.0, 0.0)], 300,
             powered)
    return acc.summary()['mean_load_stddev']


def test_load_spread_is_over_the_hosts_that_are_on():
    assert spread(None) == pytest.approx(0.25)        # 50 % and 0 %: both on
    assert spread([True, False]) == 0.0               # the idle host is off


def day(tmp_path, rows, samples=12):
    names, data = traces.load_directory(write_traces(tmp_path / 'day', rows, samples),
                                        samples)
    return names, data


def test_suspended_hosts_leave_the_spread_but_hosts_kept_on_count(tmp_path):
    names, data = day(tmp_path, [[40]])               # one VM, four hosts
    kept_on = engine.Simulation(names, data, 'dvfs', hosts=4).run()
    consolidated = engine.Simulation(names, data, 'drs', hosts=4).run()
    assert kept_on['mean_load_stddev'] > 0.05
    assert consolidated['mean_load_stddev'] == 0.0   # only its one host is on


def test_first_fit_gives_every_policy_the_same_placement(tmp_path):
    names, data = day(tmp_path, [[30]] * 4)
    packed = engine.Simulation(names, data, 'dvfs', hosts=4).initial_placement()
    even = engine.Simulation(names, data, 'even_distribution', hosts=4, initial='first_fit')
    assert even.initial_placement() == packed == [1, 1, 0, 0]
    own = engine.Simulation(names, data, 'even_distribution', hosts=4).initial_placement()
    assert own != packed                               # the least-loaded spread
    with pytest.raises(ValueError, match='unknown initial placement'):
        engine.Simulation(names, data, 'dvfs', initial='random')


def test_even_distribution_moves_to_empty_hosts_and_beats_no_balancing(tmp_path):
    names, data = day(tmp_path, [[60]] * 4)
    sims = {label: engine.Simulation(names, data, 'even_distribution', hosts=4,
                                     initial='first_fit', params=params)
            for label, params in (('none', {'max_migrations': 0}),
                                  ('even', {'high': 0.3, 'window': 1, 'tolerance': 0.0}))}
    # Hosts 2 and 3 are empty yet on: destinations for even_distribution.
    snapshot = sims['even']._snapshot(1, [1, 1, 0, 0], [None] * 4)
    assert {h.power_state for h in snapshot.hosts} == {model.ACTIVE}
    drs = engine.Simulation(names, data, 'drs', hosts=4)._snapshot(1, [1, 1, 0, 0], [None] * 4)
    assert [h.power_state for h in drs.hosts][2:] == [model.SUSPENDED] * 2
    none, even = sims['none'].run(), sims['even'].run()
    # Same start: the first step (no plan yet) has the same spread.
    assert none['series']['load_stddev'][0] == even['series']['load_stddev'][0]
    assert none['migrations'] == 0 and even['migrations'] >= 1
    assert even['mean_load_stddev'] < none['mean_load_stddev'] * 0.8


def test_g5x4_model_is_four_g5_in_one_box():
    (model,) = datacenter.host_models(1, 'g5x4')
    assert (model.pes, model.pe_mips, model.ram_mb) == (8, 2660.0, 16384)
    assert model.curve == tuple(4 * w for w in power.HP_ML110_G5)


class Shuttle:
    """Moves the first server between hosts 0 and 1 every cycle."""

    suspends = False

    def decide(self, state, rng):
        dest = 1 - state.vm_host[0]
        state.detach(0)
        state.attach(0, dest, model.Reason.OVERLOAD.value)


def test_busiest_host_hour_counts_moves_in_and_out_per_clock_hour(tmp_path):
    names, data = day(tmp_path, [[20]], samples=24)   # two hours, 23 cycles
    sim = engine.Simulation(names, data, 'dvfs', hosts=2, initial='first_fit')
    sim.policy, sim.hosts_stay_on = Shuttle(), True
    result = sim.run()
    # Cycles 1-11 fall in hour 0, 12-23 in hour 1: each host is an end of all.
    assert result['migrations'] == 23
    assert result['peak_host_hour_migrations'] == 12


def test_an_idle_spell_shorter_than_an_hour_counts_as_a_short_sleep():
    """The core-only run counts the sleeps the twin counts, so the two rows
    compare: a host idle for 30 minutes, then busy, is one short sleep; idle
    for two hours, none."""
    busy, idle = (500.0, 500.0), (0.0, 0.0)

    def short_sleeps(idle_steps):
        acc = metrics.Accumulator(1, 1, [power.HP_ML110_G4], [1000.0])
        pattern = [busy] + [idle] * idle_steps + [busy, busy]
        for now, following in zip(pattern[:-1], pattern[1:], strict=True):
            acc.step([(0.0, [now])], [following], 300)
        return acc.summary()

    assert short_sleeps(6)['sleeps_under_an_hour'] == 1      # 30 minutes
    assert short_sleeps(24)['sleeps_under_an_hour'] == 0     # 2 hours
    assert short_sleeps(24)['host_shutdowns'] == 1
