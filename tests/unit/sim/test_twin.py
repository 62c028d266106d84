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

"""The closed-loop twin: the shipped daemon cycle against a simulated cloud."""

import datetime
import inspect
import json
import random

from keystoneauth1 import exceptions as ks_exceptions
from openstack import proxy as openstack_proxy
from oslo_config import cfg
from oslo_utils import timeutils
import pytest
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.clients import nova_api
from nova_drs.cmd import sim as sim_cli
from nova_drs.db import statistics as db_statistics
from nova_drs.sim import datacenter
from nova_drs.sim import engine
from nova_drs.sim.twin import cloud as twin_cloud
from nova_drs.sim.twin import election as twin_election
from nova_drs.sim.twin import faults as twin_faults
from nova_drs.sim.twin import loop
from nova_drs.sim.twin import metering as twin_metering
from nova_drs.sim.twin import migrations as twin_migrations
from nova_drs.sim.twin import power as twin_power
from nova_drs.sim.twin import synthetic
from nova_drs.sim.twin import transport as twin_transport

#: CI's closed loop: 50 hosts, 65 VMs (CloudSim's density), 6 hours, faults on.
#: The seed is the first at which every fault kind fires (5 % of ~70
#: migrations fail: some seeds draw none; each kind has its own stream since
#: seed 7 stopped drawing any once the lifecycle stopped re-listing
#: hypervisors, twin/faults.py).
HOSTS, SAMPLES, FAULT_SEED = 50, 72, 1
#: Bounds of the closed loop under the full fault mix against the core-only run
#: of the same cloud: the gap measured with every fault kind on (1.31x energy,
#: 1.10x migrations at this seed; seeds 1-10: 1.20x-1.55x energy, mean 1.38x,
#: and 1.05x-1.55x migrations, mean 1.22x, seed 5 past this bound; without
#: faults 1.09x and 1.06x), with some room. Past the issue's 1.15x energy bound
#: under faults: doc/source/twin.md, findings.
BOUNDS = {'energy_kwh': 1.6, 'migrations': 1.5}


def test_precopy_model_converges_only_below_the_link_rate():
    # 1740 MB over 62.5 MB/s with 40 MB/s dirtied: 1740 / 22.5 s.
    assert twin_migrations.precopy_seconds(1740, 40.0, 62.5) == pytest.approx(77.33, abs=0.01)
    assert twin_migrations.precopy_seconds(1740, 0.0, 62.5) == pytest.approx(27.84)
    assert twin_migrations.precopy_seconds(1740, 62.5, 62.5) is None


def test_fault_kinds_name_calls_without_ids():
    assert twin_faults.call_kind(
        'POST', '/compute/v2.1/servers/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/action') == \
        'POST /servers/*/action'
    assert twin_faults.call_kind('GET', '/compute/v2.1/os-migrations') == \
        'GET /os-migrations'
    none = twin_faults.Faults(None)
    none.api_call('GET', '/compute/v2.1/os-migrations')
    assert not none.wake_fails('h') and none.as_dict() == dict.fromkeys(
        twin_faults.KINDS, 0)
    seeded = twin_faults.Faults(1)
    assert seeded.wake_fails('h')          # the first wake of a faulty run never works


def test_each_fault_kind_draws_from_its_own_stream():
    """A daemon that sends more requests moves the API faults only: where
    migrations fail, BMCs go silent and leadership lapses stays the seed's."""
    def other_kinds(faults):
        return [(faults.migration_fails('s'), faults.migration_stalls('s'),
                 faults.bmc_hangs('h'), faults.leader_lapses()) for _ in range(300)]

    quiet, busy = twin_faults.Faults(4), twin_faults.Faults(4)
    for _ in range(500):
        try:
            busy.api_call('GET', '/compute/v2.1/os-migrations')
        except twin_cloud.NovaError:
            pass
    assert busy.as_dict()['nova_5xx'] > 0
    assert other_kinds(quiet) == other_kinds(busy)
    assert any(hit for draws in other_kinds(twin_faults.Faults(4)) for hit in draws)


def test_synthetic_traces_repeat_by_seed():
    assert synthetic.traces(5, 12, seed=3) == synthetic.traces(5, 12, seed=3)
    names, data = synthetic.traces(5, 12, seed=3)
    assert len(names) == 5 and all(0 < x <= 1 for row in data for x in row)


def test_closed_loop_ci_run_keeps_every_invariant_under_faults():
    """The CI loop: the daemon cycle every minute for 6 virtual hours."""
    names, data = synthetic.traces(HOSTS * 1052 // 800, SAMPLES, seed=1)
    core = engine.Simulation(names, data, 'drs', hosts=HOSTS).run()
    result = loop.ClosedLoop(names, data, hosts=HOSTS, faults_seed=FAULT_SEED).run()
    assert result['invariant_violations'] == 0, result['violations']
    assert result['cycles'] == SAMPLES * 5
    # Every fault kind hit at least once but host_no_wake: these 6 hours need
    # no wake (the surge test below makes one fail).
    missed = [kind for kind, count in result['faults'].items()
              if not count and kind != 'host_no_wake']
    assert missed == [], result['faults']
    assert result['migrations'] > 0 and result['host_shutdowns'] > 0
    for metric, bound in BOUNDS.items():
        assert result[metric] <= bound * core[metric], (metric, result[metric], core[metric])
    assert result['ping_pong'] <= core['ping_pong']


def test_a_host_that_does_not_wake_under_a_surge_is_made_up_for():
    """24 servers idle for an hour then busy: the daemon consolidates, then wakes
    hosts; the first wake of a faulty run never works (host_no_wake), and the
    loop still brings enough hosts back, every invariant holding."""
    names = ['vm-%05d' % v for v in range(24)]
    data = [[0.05] * 12 + [0.7] * 12 for _ in names]
    result = loop.ClosedLoop(names, data, hosts=12, faults_seed=3).run()
    assert result['invariant_violations'] == 0, result['violations']
    assert result['faults']['host_no_wake'] >= 1, result['faults']
    active = result['series']['active_hosts']
    assert max(active[12:]) > min(active[:12]), active


def test_a_warm_up_runs_the_daemon_before_the_metered_day():
    """Twelve servers at a constant 10 % spread over twelve hosts: cold, the
    metered hour holds the daemon's consolidation (migrations, hosts still on);
    after a two-hour warm-up on the same first sample it is done before the
    day, which then meters no move and fewer hosts."""
    names = ['vm-%05d' % v for v in range(12)]
    data = [[0.1] * 12 for _ in names]
    cold = loop.ClosedLoop(names, data, hosts=12).run()
    warm = loop.ClosedLoop(names, data, hosts=12, warm_up_hours=2).run()
    assert cold['migrations'] > 0 and cold['host_shutdowns'] > 0
    assert warm['migrations'] == 0 and warm['host_shutdowns'] == 0
    assert warm['energy_kwh'] < cold['energy_kwh']
    assert warm['cycles'] == cold['cycles'] + 120 and warm['warm_up_hours'] == 2
    assert warm['invariant_violations'] == 0 and len(warm['series']['active_hosts']) == 12
    assert max(warm['series']['active_hosts']) < max(cold['series']['active_hosts'])


def test_closed_loop_repeats_by_seed():
    names, data = synthetic.traces(10, 6, seed=2)
    runs = [loop.ClosedLoop(names, data, hosts=8, faults_seed=3).run() for _ in range(2)]
    for run in runs:
        run.pop('series')
        run.pop('cycle_cost')                      # wall times: the machine's, not the seed's
    assert runs[0] == runs[1]
    assert runs[0]['requests'] > 0


def test_cli_closed_loop_needs_drs_and_traces(tmp_path, capsys):
    with pytest.raises(SystemExit):
        sim_cli.main([str(tmp_path), '--faults', '3'])
    assert '--faults needs --closed-loop' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sim_cli.main([str(tmp_path), '--closed-loop', '--stats-delay', '-5'])
    assert '--stats-delay must be at least 0' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sim_cli.main([str(tmp_path), '--closed-loop', '--policy', 'thr_mmt_0.8'])
    assert '--closed-loop runs the drs policy' in capsys.readouterr().err
    for argv in (['--warm-up', '3'], ['--closed-loop', '--warm-up', '49']):
        with pytest.raises(SystemExit):
            sim_cli.main([str(tmp_path)] + argv)
        assert '--warm-up needs --closed-loop and 0 to 48 hours' in capsys.readouterr().err


def test_cli_closed_loop_prints_both_rows_and_writes_json(tmp_path, capsys):
    day = tmp_path / 'day'
    day.mkdir()
    names, data = synthetic.traces(400, 6, seed=4)
    for name, row in zip(names, data, strict=True):
        (day / name).write_text('\n'.join(str(round(x * 100)) for x in row) + '\n')
    out = tmp_path / 'result.json'
    assert sim_cli.main([str(day), '--closed-loop', '--hosts', '8', '--samples', '6',
                         '--faults', '1', '--json', str(out)]) == 0
    printed = capsys.readouterr().out
    assert 'drs core only' in printed and 'drs closed loop' in printed
    assert 'closed loop: 0 invariant violations' in printed
    assert 'closed loop steady cycle:' in printed and 'the core decided in' in printed
    result = json.loads(out.read_text())[0]
    assert result['vms'] == 4                      # 400 files x 8 hosts / 800
    loop_result = result['closed_loop']
    assert loop_result['invariant_violations'] == 0
    assert set(loop_result['faults']) == set(twin_faults.KINDS)
    assert {'energy_kwh', 'slav', 'migrations', 'ping_pong'} <= set(loop_result)
    steady = loop_result['cycle_cost']['steady']
    assert steady['requests'] > 0 and steady['statements'] > 0
    assert 0 < steady['decision_seconds'] <= steady['wall_seconds']
    assert len(loop_result['series']['active_hosts']) == len(result['series']['active_hosts'])


def test_the_twin_database_server_runs_on_virtual_time():
    """Statistics age on the database server's clock: the twin's must be virtual."""
    engine_ = sa.create_engine('sqlite://')
    sa.event.listen(engine_, 'connect', twin_metering.virtual_sqlite_clock)
    timeutils.set_time_override(datetime.datetime(2011, 3, 3, 0, 5, 7, 123456))
    try:
        with engine_.connect() as connection:
            now = connection.execute(sa.select(db_statistics.server_utc_now())).scalar_one()
            other = connection.execute(sa.text("SELECT STRFTIME('%Y', '2020-01-02')")).scalar()
    finally:
        timeutils.clear_time_override()
    assert str(now).startswith('2011-03-03 00:05:07.123') and other == '2020'


def _one_host_cloud(faults):
    return twin_cloud.Cloud(['vm-0'], [(500.0, 613)], [datacenter.G5], ['host-0'], [0],
                            lambda v: 100.0, random.Random(0), loop.BANDWIDTH_MB_S,
                            loop.DIRTY_MB_S_AT_FULL, faults)


def test_the_scheduler_stand_in_skips_hosts_at_the_destination_limit():
    """The twin's scheduler models MigrationLimitFilter: host-1, the fullest,
    already receives max_migrations_per_destination (1) migrations; a move
    without a host goes elsewhere, a move naming host-1 (no force) is refused."""
    names = ['vm-%d' % k for k in range(6)]
    cloud = twin_cloud.Cloud(names, [(500.0, 613)] * 6, [datacenter.G5] * 3,
                             ['host-0', 'host-1', 'host-2'], [0, 1, 1, 1, 2, 2],
                             lambda v: 100.0, random.Random(0), loop.BANDWIDTH_MB_S,
                             loop.DIRTY_MB_S_AT_FULL, twin_faults.Faults(None))
    uuid_of = {server['name']: uuid for uuid, server in cloud.servers.items()}
    cloud._start_migration(cloud.servers[uuid_of['vm-5']], 'host-2', 'host-1')
    moving = cloud.servers[uuid_of['vm-0']]
    assert cloud.choose_host(moving, 'host-0') == 'host-1'      # no limit: the fullest
    cloud.max_arrivals = 1
    assert cloud.choose_host(moving, 'host-0') == 'host-2'
    with pytest.raises(twin_cloud.NovaError, match='No valid host'):
        cloud._action(moving, {'os-migrateLive': {'host': 'host-1'}})
    cloud.max_arrivals = 2
    assert cloud.choose_host(moving, 'host-0') == 'host-1'


def _shipped_retries():
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf([], default_config_files=[])
    return nova_api.retry_options(conf.drs_auth)


def _one_call(faults, retries):
    """(virtual seconds, exception) of one listing the twin answers under ``faults``."""
    start = datetime.datetime(2011, 3, 3)
    timeutils.set_time_override(start)
    try:
        nova = nova_api.NovaAPI(twin_transport.connect(_one_host_cloud(faults), timeout=60),
                                retries=retries)
        with twin_transport.virtual_retry_delays():
            response = nova._compute.get('/os-migrations', raise_exc=False)
        return (timeutils.utcnow() - start).total_seconds(), response
    except ks_exceptions.ConnectTimeout as exc:
        return (timeutils.utcnow() - start).total_seconds(), exc
    finally:
        timeutils.clear_time_override()


def test_a_hung_call_costs_the_session_timeout_once_in_virtual_time():
    faults = twin_faults.Faults(0, api_error_rate=0.0, api_hang_rate=1.0)
    seconds, outcome = _one_call(faults, _shipped_retries())
    assert isinstance(outcome, ks_exceptions.ConnectTimeout)
    # Once with the shipped [drs_auth] connect_retries (0) on every release;
    # without it openstacksdk < 4.22 (2025.2, 2026.1) tries twice.
    assert (seconds, faults.counts['nova_hang']) == (60, 1)
    unset = twin_faults.Faults(0, api_error_rate=0.0, api_hang_rate=1.0)
    seconds, _outcome = _one_call(unset, None)
    attempts = 1 + (inspect.signature(openstack_proxy.Proxy.request)
                    .parameters['connect_retries'].default or 0)
    # keystoneauth waits 0.5 s before asking again.
    assert (seconds, unset.counts['nova_hang']) == (60 * attempts + 0.5 * (attempts - 1),
                                                    attempts)


def test_a_503_is_asked_again_after_keystoneauths_delay_in_virtual_time():
    always = twin_faults.Faults(0, api_error_rate=1.0)
    seconds, response = _one_call(always, _shipped_retries())
    # [drs_auth] status_code_retries 2: three answers, 0.5 s then 1 s apart.
    assert (response.status_code, always.counts['nova_5xx'], seconds) == (503, 3, 1.5)
    once = twin_faults.Faults(0, api_error_rate=1.0)
    once.api_call = _first_call_only(once.api_call)
    seconds, response = _one_call(once, _shipped_retries())
    assert (response.status_code, once.counts['nova_5xx'], seconds) == (200, 1, 0.5)


def _first_call_only(api_call):
    calls = []

    def first(method, path):
        calls.append(path)
        return api_call(method, path) if len(calls) == 1 else False
    return first


def test_an_unresponsive_bmc_times_out_as_a_power_error():
    faults = twin_faults.Faults(0, bmc_failure_rate=1.0)
    timeutils.set_time_override(datetime.datetime(2011, 3, 3))
    try:
        driver = twin_power.TwinPower(_one_host_cloud(faults), random.Random(0))
        driver_, target = driver({'host': 'host-0'})
        with pytest.raises(exception.PowerError, match='did not answer'):
            driver_.suspend(target)
    finally:
        timeutils.clear_time_override()
    assert faults.counts['bmc_unresponsive'] == 1 and not driver.pending


def test_a_lapsed_leader_hands_the_lock_to_the_standby_mid_plan():
    faults = twin_faults.Faults(0, takeover_rate=1.0)
    election = twin_election.Election(['a', 'b'])
    a, b = (twin_election.TwinCoordinator(election, name, faults) for name in 'ab')
    assert a.is_leader() and not b.is_leader()
    first = a.fence_token()
    assert not a.still_leader()                    # the lease lapsed right before an action
    assert b.is_leader() and not a.is_leader() and faults.counts['leader_takeover'] == 1
    assert str(b.fence_token()) != str(first)
    with pytest.raises(exception.NotLeader):
        a.fence_token()


def test_a_migration_queued_behind_a_stalled_one_starts_once_it_is_aborted():
    """nova-compute runs one live migration at a time per host: the next waits
    ``queued`` and starts when the one before ends, here a stalled one the
    daemon aborts; a queued move of a server that is deleted frees its turn."""
    names = ['vm-%d' % k for k in range(3)]
    faults = twin_faults.Faults(0, migration_failure_rate=0.0, migration_stall_rate=1.0)
    timeutils.set_time_override(datetime.datetime(2011, 3, 3))
    try:
        cloud = twin_cloud.Cloud(names, [(500.0, 613)] * 3, [datacenter.G5] * 2,
                                 ['host-0', 'host-1'], [0, 0, 0], lambda v: 100.0,
                                 random.Random(0), loop.BANDWIDTH_MB_S,
                                 loop.DIRTY_MB_S_AT_FULL, faults)
        stalled, queued, gone = (cloud.servers[uuid] for uuid in sorted(
            cloud.servers, key=lambda uuid: cloud.servers[uuid]['name']))
        for server in (stalled, queued, gone):
            cloud._start_migration(server, 'host-0', 'host-1')
        assert [s['_migration']['status'] for s in (stalled, queued, gone)] == [
            'preparing', 'queued', 'queued']
        timeutils.advance_time_seconds(3600)
        cloud.run_due()
        assert [s['_migration']['status'] for s in (stalled, queued)] == ['running', 'queued']
        faults.migration_stall_rate = 0.0
        cloud._abort(stalled, stalled['_migration']['id'])
        assert queued['_migration']['status'] == 'preparing'
        cloud.delete(gone['id'])
        timeutils.advance_time_seconds(3600)
        cloud.run_due()
    finally:
        timeutils.clear_time_override()
    assert stalled['OS-EXT-SRV-ATTR:host'] == 'host-0' and '_migration' not in stalled
    assert queued['OS-EXT-SRV-ATTR:host'] == 'host-1' and '_migration' not in queued
    assert cloud.hosts['host-0'].live_queue == []
