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

import json
import os
import sys

import pytest

from nova_drs import exception
from nova_drs.cmd import sim as cli
from nova_drs.loadbalancer import power
from nova_drs.sim import datacenter
from nova_drs.sim import engine
from nova_drs.sim import metrics
from nova_drs.sim import report
from nova_drs.sim import sweep
from nova_drs.sim import traces


def write_traces(directory, rows, samples=6):
    directory.mkdir(exist_ok=True)
    for k, values in enumerate(rows):
        (directory / ('vm%02d' % k)).write_text(
            '\n'.join(str(v) for v in (values * samples)[:samples]) + '\n')
    return str(directory)


@pytest.mark.parametrize('content, message', [
    ('10\n20\n', 'vm00: 2 samples, expected 6'),
    ('10\nabc\n', "vm00:2: 'abc' is not an integer"),
    ('10\n101\n', 'vm00:2: 101 is outside 0-100'),
    ('10\n-1\n', 'vm00:2: -1 is outside 0-100'),
])
def test_bad_trace_files_name_file_and_line(tmp_path, content, message):
    (tmp_path / 'vm00').write_text(content)
    with pytest.raises(exception.TraceError, match=message):
        traces.load_directory(str(tmp_path), samples=6)


def test_empty_or_missing_directory(tmp_path):
    with pytest.raises(exception.TraceError, match='no trace files'):
        traces.load_directory(str(tmp_path))
    with pytest.raises(exception.TraceError, match='not a directory'):
        traces.load_directory(str(tmp_path / 'nope'))


def test_vm_types_in_contiguous_blocks():
    types = datacenter.vm_types(10)          # block = ceil(10 / 4) = 3
    assert types == [datacenter.VM_TYPES[k // 3] for k in range(10)]
    assert datacenter.migration_seconds(870, 1000.0) == pytest.approx(13.92)
    assert [m.name for m in datacenter.host_models(3)] == [
        'hp-ml110-g4', 'hp-ml110-g5', 'hp-ml110-g4']
    with pytest.raises(ValueError):
        datacenter.host_models(3, 'g6')


def test_energy_and_sla_of_one_host_by_hand():
    acc = metrics.Accumulator(1, 1, [power.HP_ML110_G4], [1000.0])
    # 300 s at 50 % -> 70 %: (102 + 108) / 2 * 300 = 31500 J; no violation.
    acc.step([(0.0, [(500.0, 500.0)])], [(700.0, 700.0)], 300)
    # 10 s short of CPU (allocated 900 of 1200 requested), then 290 s idle.
    acc.step([(0.0, [(900.0, 1200.0)]), (10.0, [(0.0, 0.0)])], [(0.0, 0.0)], 300)
    acc.migration(0, 50.0)
    acc.requested(0, 1000.0)
    result = acc.summary()
    energy = 31500 + (114 + 86) / 2 * 10
    assert result['energy_kwh'] == pytest.approx(energy / 3.6e6)
    assert result['slatah'] == pytest.approx(10 / 310)
    assert result['pdm'] == pytest.approx(0.05)
    assert result['slav'] == pytest.approx(10 / 310 * 0.05)
    assert result['host_shutdowns'] == 1
    assert result['migrations'] == 1


def test_small_day_runs_and_keeps_every_vm_placed(tmp_path):
    path = write_traces(tmp_path / 'day', [[5, 80], [60, 10], [30], [90, 95], [0, 0, 40]], 24)
    names, data = traces.load_directory(path, 24)
    for policy in ('drs', 'thr_mmt_0.8', 'lr_mmt_1.2', 'dvfs'):
        result = engine.Simulation(names, data, policy, hosts=6).run()
        assert result['energy_kwh'] > 0
        assert len(result['series']['active_hosts']) == 24
        if policy == 'dvfs':
            assert result['migrations'] == 0


def test_too_few_hosts_is_a_clear_error(tmp_path):
    path = write_traces(tmp_path / 'day', [[100]] * 4)
    names, data = traces.load_directory(path, 6)
    with pytest.raises(exception.SimulationError, match='fits on no host'):
        engine.Simulation(names, data, 'thr_mmt_0.8', hosts=1).run()


def test_sweep_expands_cartesian_product():
    assert sweep.parse(['a=1,2', 'b=0.5']) == [{'a': 1, 'b': 0.5}, {'a': 2, 'b': 0.5}]
    assert sweep.parse([]) == [None]
    for bad in ('a', 'a=', 'a=x'):
        with pytest.raises(ValueError):
            sweep.parse([bad])


def test_cli_writes_table_json_and_report(tmp_path, capsys):
    path = write_traces(tmp_path / 'day', [[20, 70], [50], [10, 90]], 12)
    out = tmp_path / 'out'
    code = cli.main([path, '--samples', '12', '--hosts', '4', '--policy', 'drs',
                     '--policy', 'thr_mmt_0.8', '--sweep', 'underload=0.5,0.8',
                     '--json', str(tmp_path / 'r.json'), '--report', str(out),
                     '--no-progress'])
    assert code == 0
    printed = capsys.readouterr().out
    assert 'thr_mmt_0.8' in printed and 'underload=0.5' in printed
    assert len(json.loads((tmp_path / 'r.json').read_text())) == 3
    assert (out / 'index.html').exists() and (out / 'active_hosts.png').exists()


def test_report_without_matplotlib_says_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'matplotlib', None)
    result = {'policy': 'drs', 'params': None, 'energy_kwh': 1.0, 'migrations': 0,
              'slav': 0.0, 'pdm': 0.0, 'slatah': 0.0, 'esv': 0.0, 'host_shutdowns': 0,
              'mean_active_hosts': 1.0, 'peak_active_hosts': 1, 'mean_load_stddev': 0.0,
              'ping_pong': 0,
              'series': {key: [0] for key, _title in report.SERIES}}
    note = report.write_report([result], str(tmp_path))
    assert 'matplotlib is not installed' in note
    assert 'matplotlib is not installed' in (tmp_path / 'index.html').read_text()
    assert not [n for n in os.listdir(tmp_path) if n.endswith('.png')]


@pytest.mark.parametrize('args, message', [
    (['{missing}'], 'not a directory'),
    (['{day}', '--policy', 'nope'], "unknown policy 'nope'"),
    (['{day}', '--host-model', 'cloudsim', '--hosts', '0'], 'at least one host'),
    (['{day}', '--sweep', 'x'], 'bad --sweep'),
    (['{day}', '--sweep', 'bogus=1'], 'bad drs parameter'),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    day = write_traces(tmp_path / 'day', [[10]])
    argv = [a.format(missing=str(tmp_path / 'missing'), day=day) for a in args]
    assert cli.main(argv + ['--samples', '6', '--no-progress']) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count('\n') == 1 and 'Traceback' not in err
