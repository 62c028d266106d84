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

"""What-if replay: --since parsing, anonymised export, import round trip, replay."""

import dataclasses
import gzip
import json
import uuid

import pytest

from nova_drs.cmd import sim
from nova_drs.daemon import planning
from nova_drs.db import api as db_api
from nova_drs.db import cycle_inventory
from nova_drs.db import migration
from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.sim import snapshot_file
from nova_drs.sim import stats_replay

PERIOD = 60.0
T0 = 1_790_000_000.0
HOSTS = ('compute-a.example.org', 'compute-b.example.org', 'compute-c.example.org')
PROJECT = 'f3a9c2d1e4b54c7f8a6e0d2b1c3f4e5a'


@dataclasses.dataclass
class View:
    snapshot: model.Snapshot
    aggregates: list


def dataset(cycles=6, busy=0.05):
    """Three 8-vCPU hosts in one power_saving aggregate, two servers on each,
    one quiet host: what the daemon would have recorded, cycle by cycle."""
    servers = {str(uuid.UUID(int=i + 1)): HOSTS[i // 2] for i in range(6)}
    aggregate = {'name': 'rack-7-%s' % PROJECT, 'hosts': list(HOSTS),
                 'metadata': {'drs_policy': 'power_saving', 'min_active_hosts': '1',
                              'owner': PROJECT, 'cpu_allocation_ratio': '4.0'}}
    bodies, host_samples, instance_samples = [], {}, {}
    for k in range(cycles):
        now = T0 + k * PERIOD
        for n, (server, host) in enumerate(sorted(servers.items())):
            load = busy if host == HOSTS[0] else 0.3 + 0.05 * n
            instance_samples.setdefault(server, []).append((now - 1, 100 * load))
        for host in HOSTS:
            host_samples.setdefault(host, []).append((now - 1, 10.0))
        hosts = tuple(model.Host(name=h, vcpus=8, ram_mb=16384, mips=8.0, pe_mips=1.0,
                                 cluster=aggregate['name'], cpu_allocation_ratio=4.0)
                      for h in HOSTS)
        instances = tuple(model.Instance(uuid=s, host=h, vcpus=2, ram_mb=2048, mips=2.0,
                                         server_group=PROJECT if s.endswith('1') else None)
                          for s, h in sorted(servers.items()))
        view = View(model.Snapshot(hosts, instances, now=now), [aggregate])
        bodies.append(cycle_inventory.body(view, [], now, T0 - 3600, now - 1, 12))
    return {'format': stats_replay.FORMAT, 'cycles': bodies,
            'host_samples': host_samples, 'instance_samples': instance_samples}


def test_export_holds_no_name_uuid_or_project_and_replays_the_same(tmp_path):
    source = dataset()
    path = str(tmp_path / 'whatif.json.gz')
    snapshot_file.write(snapshot_file.anonymise(source), path)

    with open(path, 'rb') as handle:
        text = gzip.decompress(handle.read()).decode()
    for secret in HOSTS + tuple(source['instance_samples']) + (PROJECT, 'rack-7', 'owner'):
        assert secret not in text
    assert 'h0001' in text and 's00001' in text and 'c01' in text
    assert str(int(T0)) not in text  # times are relative to the first cycle

    imported = snapshot_file.read(path)
    before = _simulate(source, 'drs')
    after = _simulate(imported, 'drs')
    for key in ('energy_kwh', 'migrations', 'slav', 'ping_pong', 'peak_active_hosts'):
        assert before[key] == after[key]


def test_replay_consolidates_the_quiet_host():
    result = _simulate(dataset(cycles=8), 'drs')

    # 6 servers use 4 of one host's 8 vCPUs: two hosts are emptied (4 moves)
    assert result['migrations'] == 4
    assert result['series']['active_hosts'][0] == 3
    assert result['series']['active_hosts'][-1] == 1
    assert result['peak_active_hosts'] == 3 and result['mean_active_hosts'] < 1.5
    assert result['ping_pong'] == 0


def test_rebuilt_snapshot_gives_the_recorded_plan():
    from nova_drs import conf as drs_conf
    source = dataset()
    planner = planning.ClusterPlanner(drs_conf.CONF, catalog.by_name('drs'))
    # what the daemon would have recorded: the plan of each cycle's own view
    for cycle in source['cycles']:
        view = cycle_inventory.rebuild(cycle, source['host_samples'], source['instance_samples'])
        cycle['actions'] = [cycle_inventory.recorded(a) for a in planner.plan(view)]
    outcomes = stats_replay.reproduce(source, planner)

    assert any(daemon for _now, daemon, _replay in outcomes)
    assert all(daemon == replay for _now, daemon, replay in outcomes)


def test_history_is_what_the_daemon_held():
    samples = [(t, 10.0 * t) for t in range(1, 11)]

    assert cycle_inventory.history(samples, since=2, newest=8, length=4) == (0.5, 0.6, 0.7, 0.8)
    assert cycle_inventory.history(samples, since=None, newest=None, length=4) == ()


def _simulate(data, policy):
    from nova_drs import conf as drs_conf
    simulation = stats_replay.StatsSimulation(
        data, policy, 'none', drs_conf.CONF.drs_energy.power_curve)
    return simulation.run()


@pytest.mark.parametrize('since', ['7x', '3 days', 'yesterday', '2999-01-01T00:00:00'])
def test_bad_since_is_one_line_exit_2(since, capsys):
    with pytest.raises(SystemExit) as exit_:
        sim.main(['--from-stats', '--since', since, '--connection', 'sqlite://'])

    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith('nova-drs-sim: error: --since: since=')


@pytest.mark.parametrize('since', ['7d', '12h', '30m'])
def test_good_since_reaches_the_database(since, tmp_path, capsys):
    url = 'sqlite:///%s' % (tmp_path / 'drs.sqlite')
    migration.sync(db_api.Database(url))

    assert sim.main(['--from-stats', '--since', since, '--connection', url]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith('nova-drs-sim: no daemon cycle recorded since')
    assert '\n' not in err


def test_unsynced_database_is_one_line(capsys):
    assert sim.main(['--from-stats', '--connection', 'sqlite://']) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith('nova-drs-sim: DRS database sqlite://: ') and '\n' not in err


def test_import_of_a_non_dataset_is_one_line(tmp_path, capsys):
    path = tmp_path / 'x.json'
    path.write_text(json.dumps({'hello': 1}))

    assert sim.main(['--import', str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        'nova-drs-sim: error: %s: not a %s dataset (written by nova-drs-sim --export)'
        % (path, stats_replay.FORMAT))


def test_missing_import_file_and_unknown_policy_are_one_line(tmp_path, capsys):
    assert sim.main(['--import', str(tmp_path / 'none.json')]) == 2
    assert capsys.readouterr().err.strip() == (
        'nova-drs-sim: error: %s: No such file or directory' % (tmp_path / 'none.json'))

    path = str(tmp_path / 'd.json')
    snapshot_file.write(snapshot_file.anonymise(dataset()), path)
    assert sim.main(['--import', path, '--policy', 'nosuch']) == 2
    out, err = capsys.readouterr()
    assert out == '' and err.startswith("nova-drs-sim: error: unknown policy 'nosuch'")


def test_dvfs_is_the_nothing_moves_baseline(tmp_path, capsys):
    path = str(tmp_path / 'd.json')
    snapshot_file.write(snapshot_file.anonymise(dataset()), path)

    assert sim.main(['--import', path, '--policy', 'dvfs', '--policy', 'drs']) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows['dvfs'][2] == '0' and int(rows['drs'][2]) > 0
    assert float(rows['dvfs'][1]) > float(rows['drs'][1])   # more energy, nothing moved


def _import_error(path, capsys, *extra):
    """What ``nova-drs-sim --import path`` says: exit status and its one stderr line."""
    status = sim.main(['--import', str(path), *extra])
    out, err = capsys.readouterr()
    assert out == '' and 'Traceback' not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return status, lines[0]


def test_truncated_gzip_is_one_line(tmp_path, capsys):
    whole = gzip.compress(json.dumps(snapshot_file.anonymise(dataset())).encode())
    path = tmp_path / 'cut.json.gz'
    path.write_bytes(whole[:len(whole) // 2])
    assert _import_error(path, capsys) == (
        2, 'nova-drs-sim: error: %s: corrupt or truncated gzip file' % path)


def test_gzip_bomb_stops_at_the_limit(tmp_path, capsys):
    # 64 MiB of zeros in 64 KiB of gzip: the cap of 1 MiB stops it while it inflates.
    path = tmp_path / 'bomb.json.gz'
    with gzip.open(path, 'wb') as bomb:
        for _ in range(64):
            bomb.write(b'0' * (1024 * 1024))
    assert path.stat().st_size < 1024 * 1024
    status, line = _import_error(path, capsys, '--import-limit', '1')
    assert (status, line) == (
        2, 'nova-drs-sim: error: %s: more than %d bytes of JSON (the import limit)'
        % (path, 1024 * 1024))


def test_plain_file_over_the_limit_is_refused(tmp_path, capsys):
    path = tmp_path / 'big.json'
    path.write_bytes(b' ' * (1024 * 1024 + 1))
    assert _import_error(path, capsys, '--import-limit', '1')[1].endswith(
        'more than 1048576 bytes of JSON (the import limit)')


@pytest.mark.parametrize('damage, where', [
    (lambda d: d['cycles'][0]['hosts'][0].update(vcpus='eight'), 'cycles/0/hosts/0/vcpus'),
    (lambda d: d['cycles'][0].update(hosts={'h0001': {}}), 'cycles/0/hosts'),
    (lambda d: d['cycles'][1]['instances'][0].pop('uuid'), 'cycles/1/instances/0'),
    (lambda d: d['cycles'][0]['hosts'][0].update(colour='red'), 'cycles/0/hosts/0'),
    (lambda d: d.update(host_samples={'h0001': [[1.0]]}), 'host_samples/h0001/0'),
    (lambda d: d.update(instance_samples=[]), 'instance_samples'),
    (lambda d: d.update(cycles=[]), 'cycles'),
    (lambda d: d['cycles'][0].update(actions=[{'type': 'suspend'}]), 'cycles/0/actions/0'),
])
def test_dataset_of_the_wrong_shape_is_one_line(tmp_path, capsys, damage, where):
    broken = snapshot_file.anonymise(dataset())
    damage(broken)
    path = tmp_path / 'broken.json'
    path.write_text(json.dumps(broken))
    status, line = _import_error(path, capsys)
    assert status == 2
    assert line.startswith('nova-drs-sim: error: %s: malformed %s dataset at %s: '
                           % (path, stats_replay.FORMAT, where)), line


def test_bad_json_and_bad_limit_are_one_line(tmp_path, capsys):
    path = tmp_path / 'bad.json'
    path.write_bytes(b'{"format": "nova-drs-sim-stats/1", "cycles": [')
    status, line = _import_error(path, capsys)
    assert status == 2 and line.startswith(
        'nova-drs-sim: error: %s: not a JSON what-if dataset (' % path)
    with pytest.raises(SystemExit) as usage:
        sim.main(['--import', str(path), '--import-limit', '0'])
    assert usage.value.code == 2
    assert '--import-limit must be at least 1' in capsys.readouterr().err
