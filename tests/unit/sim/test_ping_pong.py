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

"""Ping-pong count of the simulator: returns to a recently left host."""

from nova_drs.cmd import sim as cli
from nova_drs.sim import engine
from nova_drs.sim import oscillation
from nova_drs.sim import traces


def test_return_within_window_counts_once():
    counter = oscillation.PingPongCounter(window=600)
    counter.moved('vm', 'a', 'b', 0)
    counter.moved('vm', 'b', 'a', 300)      # back to a after 300 s
    counter.moved('vm', 'a', 'c', 600)
    assert counter.count == 1


def test_return_after_window_or_to_another_host_does_not_count():
    counter = oscillation.PingPongCounter(window=600)
    counter.moved('vm', 'a', 'b', 0)
    counter.moved('vm', 'b', 'c', 100)
    counter.moved('vm', 'c', 'a', 900)      # a was left 900 s ago
    counter.moved('other', 'c', 'b', 950)   # another server never left b
    assert counter.count == 0


def test_engine_reports_ping_pong_for_every_policy(tmp_path):
    # Two VMs whose load alternates: threshold policies chase it.
    day = tmp_path / 'day'
    day.mkdir()
    (day / 'vm00').write_text('\n'.join(['90', '5'] * 12) + '\n')
    (day / 'vm01').write_text('\n'.join(['5', '90'] * 12) + '\n')
    (day / 'vm02').write_text('\n'.join(['60'] * 24) + '\n')
    names, data = traces.load_directory(str(day), samples=24)
    counts = {policy: engine.Simulation(names, data, policy, hosts=4,
                                        ping_pong_window=3600).run()['ping_pong']
              for policy in ('drs', 'lr_mmt_1.2', 'mad_mmt_2.5')}
    # drs waits for a load to last; the local-regression and MAD detectors
    # move the alternating servers back and forth.
    assert counts == {'drs': 0, 'lr_mmt_1.2': 8, 'mad_mmt_2.5': 22}
    short = engine.Simulation(names, data, 'mad_mmt_2.5', hosts=4, ping_pong_window=0).run()
    assert short['ping_pong'] == 0


def test_cli_prints_ping_pong_and_rejects_negative_window(tmp_path, capsys):
    day = tmp_path / 'day'
    day.mkdir()
    (day / 'vm00').write_text('\n'.join(['50'] * 6) + '\n')
    assert cli.main([str(day), '--hosts', '2', '--samples', '6', '--no-progress']) == 0
    assert 'ping-pong' in capsys.readouterr().out
    assert cli.main([str(day), '--samples', '6', '--ping-pong-window', '-1']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and '--ping-pong-window' in err
