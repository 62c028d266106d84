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

"""Failures on the multi-process mini-cloud, after test_daemon.py's scenarios.

A live migration nova fails (the trace driver's ``drs_migration_fails``
metadata), a leader killed mid-evacuation with a standby on Redis, SIGTERM
mid-evacuation and a restart, a leader SIGKILLed with an approved plan
under way (the standby finishes it, each move once), a BMC that does not
answer, a host that does not come back within
``wake_timeout``: the daemon abandons or finishes, nothing is lost, the
cluster carries on. The cluster is in manual automation here, so only the
admin requests of each scenario move servers. Each ends with
``scenario.check_invariants``.
"""

import datetime
import os
import signal
import time

import pytest

from tests.integration import bmc
from tests.integration import cloud as minicloud
from tests.integration import scenario

pytestmark = pytest.mark.integration

# Database 3: the functional tier's HA tests use Redis' default database.
REDIS_URL = 'redis://127.0.0.1:6379?db=3'
LEADER_LOG = 'is now the nova-loadbalancer leader'
MIGRATION_SECONDS = 8
#: [loadbalancer] wake_timeout's minimum: the last scenario's daemon, which
#: wakes only a host that does not come back.
QUICK_WAKE_TIMEOUT = 30
#: [drs_power] timeout of the silent-BMC scenario's daemon: a BMC simulator on
#: loopback answers in well under a second, an IPMI call's child process
#: starts in a few even on a loaded CI machine.
QUICK_POWER_TIMEOUT = 10
#: A server burning its whole vCPU: the trace held at its last sample (50 %)
#: and scaled by 4 (the trace driver caps it at 100 %).
BUSY = {'drs_trace': 'node1_planetlab_albany_edu_yale_p4p', 'drs_trace_start': '287',
        'drs_trace_scale': '4'}


def _busiest_host(compute, avoid):
    """The active host other than ``avoid`` with the most servers."""
    drs = scenario.drs_hosts(compute)
    counts = {host: 0 for host in minicloud.COMPUTES
              if host != avoid and drs[host]['suspend_state'] == 'active'}
    for server in scenario.list_servers(compute):
        if server['OS-EXT-SRV-ATTR:host'] in counts:
            counts[server['OS-EXT-SRV-ATTR:host']] += 1
    if not counts:
        pytest.fail('no active host besides %s: %s' % (avoid, drs), pytrace=False)
    return max(sorted(counts), key=counts.get)


def _on_host(compute, host):
    return [s for s in scenario.list_servers(compute) if s['OS-EXT-SRV-ATTR:host'] == host]


def _host_with_servers(cloud, compute, avoid, prefix):
    """The busiest active host other than ``avoid`` and its servers, at least
    two: where the earlier scenarios left fewer (which hosts they suspend,
    wake and fill varies from run to run), new idle servers named ``prefix``
    are booted there first."""
    host = _busiest_host(compute, avoid)
    servers = _on_host(compute, host)
    missing = 2 - len(servers)
    if missing > 0:
        print('%s holds %d servers: %d more booted there' % (host, len(servers), missing))
        scenario.boot_spread(cloud, compute, prefix=prefix, per_host=missing, hosts=[host])
        servers = _on_host(compute, host)
    assert len(servers) >= 2, servers
    return host, servers


def _tag(compute, servers, **metadata):
    for server in servers:
        scenario.ok(compute.post('/servers/%s/metadata' % server['id'],
                                 json={'metadata': metadata}))


def _untag(compute, servers, key):
    for server in servers:
        compute.delete('/servers/%s/metadata/%s' % (server['id'], key))


def _moves_since(compute, uuid, source, since):
    """nova's migrations of ``uuid`` since ``since`` (off ``source``; None: any)."""
    return [m for m in scenario.migrations_of(compute, uuid)
            if scenario.utc(m['created_at']) >= since
            and source in (None, m['source_compute'])]


def test_a_live_migration_nova_fails_abandons_the_suspend_and_nothing_is_lost(cloud):
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    woken = _woken_host(compute)
    # From here on only the scenarios' admin requests move servers.
    scenario.opt_in(compute, automation='manual')
    host, servers = _host_with_servers(cloud, compute, woken, 'drs-load-failing')
    failing = servers[0]
    _tag(compute, [failing], drs_migration_fails='1')
    since = scenario.nova_now()
    try:
        scenario.admin_action(compute, 'suspend_host', host)

        def abandoned():
            record = scenario.drs_hosts(compute)[host]
            assert record['suspend_state'] not in ('suspended', 'error'), record
            reason = record['state_reason'] or ''
            return record if (record['suspend_state'] == 'active'
                              and 'abandoned' in reason) else None

        record = scenario.wait_for('suspend of %s abandoned' % host, abandoned)
    finally:
        _untag(compute, [failing], 'drs_migration_fails')
    assert failing['id'] in record['state_reason'], record
    failed = _moves_since(compute, failing['id'], host, since)
    assert [m['status'] for m in failed] == ['error'], (failed, record)
    current = scenario.ok(compute.get('/servers/%s' % failing['id']))['server']
    assert (current['status'], current['OS-EXT-SRV-ATTR:host']) == ('ACTIVE', host), current
    scenario.check_invariants(cloud, compute)
    # The cluster carries on: the host takes a new server, the daemon still cycles.
    server = scenario.ok(compute.post('/servers', json={'server': {
        'name': 'drs-load-after-failed-migration', 'imageRef': cloud.image,
        'flavorRef': cloud.flavor, 'networks': 'none', 'host': host}}), 202)['server']
    scenario.wait_for('a new server ACTIVE on %s' % host, lambda: scenario.ok(compute.get(
        '/servers/%s' % server['id']))['server']['status'] == 'ACTIVE', 120)
    scenario.STATE['abandoned'] = host
    scenario.check_invariants(cloud, compute)


def _ha_conf(cloud):
    """The config file of daemons that elect a leader on Redis."""
    conf = os.path.join(cloud.etc, 'nova-drs', 'ha.conf')
    with open(conf, 'w') as handle:
        handle.write('[drs_coordination]\nbackend_url = %s\nleader_timeout = 10\n'
                     'heartbeat_interval = 2\n' % REDIS_URL)
    return conf


def _stop_daemons(cloud):
    """Every running nova-loadbalancer stopped (SIGTERM), making way for others."""
    for name in [n for n in cloud.running() if n.startswith('nova-loadbalancer')]:
        cloud.stop_process(name)


def _restart_daemon_with(cloud, name, section, option, value):
    """Every nova-loadbalancer stopped; ``name`` started on Redis with
    ``[section] option = value`` over the HA config, once it leads."""
    conf = os.path.join(cloud.etc, 'nova-drs', name + '.conf')
    with open(conf, 'w') as handle:
        handle.write('[%s]\n%s = %s\n' % (section, option, value))
    _stop_daemons(cloud)
    cloud.start_daemon(name, _ha_conf(cloud), conf)
    scenario.wait_for('a leader again', lambda: _leader(cloud, [name]), 90, 1)


def _start_ha_daemons(cloud):
    """The devstack daemon makes way for two daemons electing a leader on Redis."""
    conf = _ha_conf(cloud)
    _stop_daemons(cloud)
    names = ('nova-loadbalancer-a', 'nova-loadbalancer-b')
    for name in names:
        cloud.start_daemon(name, conf)
    leader = scenario.wait_for('a leader elected', lambda: _leader(cloud, names), 90, 1)
    return leader, [name for name in names if name != leader][0]


def _leader(cloud, names):
    for name in names:
        assert name not in cloud.failed(), 'see %s' % os.path.join(cloud.logs, name + '.log')
        with open(os.path.join(cloud.logs, name + '.log'), errors='replace') as handle:
            if LEADER_LOG in handle.read():
                return name
    return None


def _slow_evacuation(cloud, compute, prefix):
    """The busiest host besides the woken one and its servers (two or more),
    each of which now takes MIGRATION_SECONDS to live-migrate."""
    host, servers = _host_with_servers(cloud, compute, _woken_host(compute), prefix)
    _tag(compute, servers, drs_migration_seconds=str(MIGRATION_SECONDS))
    return host, servers


def _suspend_until_first_move(compute, host, servers):
    """Admin suspend of ``host``; returns once its first live migration started."""
    since = scenario.nova_now()
    scenario.admin_action(compute, 'suspend_host', host)
    scenario.wait_for('a first live migration off %s' % host, lambda: any(
        _moves_since(compute, s['id'], host, since) for s in servers), 120, 0.5)
    return since


def _each_moved_once_then_wake(cloud, compute, host, servers, since):
    """Every server left ``host`` by one completed migration; then the host is
    woken again (the next scenarios need it), invariants checked both times."""
    for server in servers:
        moves = _moves_since(compute, server['id'], host, since)
        assert [m['status'] for m in moves] == ['completed'], (server['id'], moves)
    scenario.check_invariants(cloud, compute)
    scenario.admin_action(compute, 'unsuspend_host', host)
    scenario.wait_for('%s active again' % host,
                      lambda: scenario.state_of(compute, host) == 'active')
    scenario.check_invariants(cloud, compute)


def test_ha_standby_finishes_the_evacuation_when_the_leader_is_killed(cloud):
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    leader, standby = _start_ha_daemons(cloud)
    host, servers = _slow_evacuation(cloud, compute, 'drs-load-ha')
    try:
        since = _suspend_until_first_move(compute, host, servers)
        cloud._signal(cloud.running()[leader], signal.SIGKILL)
        killed = time.monotonic()
        scenario.wait_for('%s suspended by the standby' % host,
                          lambda: scenario.state_of(compute, host) == 'suspended')
        finished = time.monotonic()
    finally:
        _untag(compute, servers, 'drs_migration_seconds')
    assert _leader(cloud, [standby]) == standby
    cloud.stop_process(leader)
    scenario.figures(cloud, ha_kill_to_suspended_s=round(finished - killed, 1),
                     ha_servers_on_host=len(servers))
    # The new leader also wakes it again.
    _each_moved_once_then_wake(cloud, compute, host, servers, since)


def test_sigterm_mid_evacuation_exits_in_time_and_the_next_start_resumes(cloud):
    """SIGTERM ends the running cycle and the process within [DEFAULT]
    graceful_shutdown_timeout (3 s here); the next daemon finishes the suspend."""
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    running = [n for n in cloud.running() if n.startswith('nova-loadbalancer')]
    assert len(running) == 1, running
    host, servers = _slow_evacuation(cloud, compute, 'drs-load-sigterm')
    try:
        since = _suspend_until_first_move(compute, host, servers)
        pid = cloud.running()[running[0]]
        cloud._signal(pid, signal.SIGTERM)
        sent = time.monotonic()
        while minicloud._pid_alive(pid) and time.monotonic() - sent < 30:
            time.sleep(0.1)
        exited = time.monotonic() - sent
        assert not minicloud._pid_alive(pid), '%s ignored SIGTERM for 30 s' % running[0]
        cloud.stop_process(running[0])  # forgets its pid file
        assert scenario.state_of(compute, host) == 'suspending'
        cloud.start_daemon('nova-loadbalancer-resumed', _ha_conf(cloud))
        scenario.wait_for('%s suspended by the restarted daemon' % host,
                          lambda: scenario.state_of(compute, host) == 'suspended')
    finally:
        _untag(compute, servers, 'drs_migration_seconds')
    assert exited <= 3 + 5, 'exit took %.1f s' % exited
    scenario.figures(cloud, sigterm_to_exit_s=round(exited, 1))
    _each_moved_once_then_wake(cloud, compute, host, servers, since)


def _host_free_to_move(compute):
    """The active host with a power driver, none of whose servers moved within
    the last hour ([loadbalancer] migration_cooldown), that holds the fewest
    servers (the host the last scenario emptied and woke): the planner offers
    only its servers (and those of hosts over capacity)."""
    recent = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    servers = scenario.list_servers(compute, None)
    resting = {}
    for host, record in scenario.drs_hosts(compute).items():
        if record['suspend_state'] != 'active' or not record['power_driver']:
            continue
        here = [s for s in servers if s['OS-EXT-SRV-ATTR:host'] == host]
        if not any(scenario.utc(m['created_at']) >= recent
                   for s in here for m in scenario.migrations_of(compute, s['id'])):
            resting[host] = len(here)
    if not resting:
        pytest.fail('every active host holds a server moved within the last hour',
                    pytrace=False)
    return min(sorted(resting), key=resting.get)


def _pending_moves(compute, servers):
    """The pending plan when it migrates two of ``servers`` or more."""
    plan = scenario.ok(compute.get('/loadbalancer/plan'))['plan']
    if not plan or plan['status'] != 'pending':
        return None
    moved = {action['instance'] for action in plan['actions'] if action['type'] == 'migrate'}
    return plan if len(moved & set(servers)) >= 2 else None


def _approve_slow_moves(compute, fresh, attempts=8):
    """Approve a pending plan migrating two of the ``fresh`` servers, each of
    its migrations made MIGRATION_SECONDS long first; a newer cycle supersedes a
    pending plan, so a lost race (409) is retried with the new plan. Returns
    (plan, servers moved, approval time)."""
    for _attempt in range(attempts):
        plan = scenario.wait_for('a pending plan migrating two of %s' % fresh,
                                 lambda: _pending_moves(compute, fresh), 180, 0.5)
        servers = [{'id': action['instance']} for action in plan['actions']
                   if action['type'] == 'migrate']
        _tag(compute, servers, drs_migration_seconds=str(MIGRATION_SECONDS))
        since = scenario.nova_now()
        response = compute.post('/loadbalancer/plan/action',
                                json={'approve': {'plan_id': plan['id']}})
        if response.status_code == 202:
            return plan, servers, since
        assert response.status_code == 409, response.text
    pytest.fail('no approval won against the next cycle', pytrace=False)


def _mid_plan(compute, plan_id):
    """The plan while one of its migrations started and another still waits;
    'refused' when the orchestrator refused one of its moves, so it ran whole
    in one pass (a server whose move failed in an earlier scenario is held
    back for the cooldown, though the planner offers it); pytest fails if it
    ran whole otherwise (nothing left to resume)."""
    shown = scenario.ok(compute.get('/loadbalancer/plans/%s' % plan_id))['plan']
    statuses = [a['status'] for a in shown['actions'] if a['type'] == 'migrate']
    if shown['status'] in ('done', 'failed'):
        if 'skipped' in statuses:
            return 'refused'
        pytest.fail('plan %s ran whole before the kill: %s' % (plan_id, statuses),
                    pytrace=False)
    return shown if 'pending' in statuses and {'started', 'done'} & set(statuses) else None


def _approve_until_mid_plan(compute, fresh, attempts=4):
    """An approved plan caught mid-way: (plan, servers, approval time). A plan
    with a refused move ran whole; the next pending plan is approved instead."""
    for _attempt in range(attempts):
        plan, servers, since = _approve_slow_moves(compute, fresh)
        try:
            mid = scenario.wait_for('plan %s mid-way' % plan['id'],
                                    lambda plan_id=plan['id']: _mid_plan(compute, plan_id),
                                    120, 0.5)
        except BaseException:
            _untag(compute, servers, 'drs_migration_seconds')
            raise
        if mid != 'refused':
            return plan, servers, since
        _untag(compute, servers, 'drs_migration_seconds')
    pytest.fail('every approved plan had a move the orchestrator refused', pytrace=False)


def test_ha_standby_finishes_an_approved_plan_when_the_leader_is_killed(cloud):
    """Two daemons on Redis that move one server per host at a time: an approved
    plan of two migrations starts one and keeps the other waiting while the
    first runs (MIGRATION_SECONDS); the leader is SIGKILLed then, the standby
    resumes the plan from its progress and nova's records: every approved move
    happens exactly once.

    The plan is made, not waited for: every other server idle, five new
    servers each burning its whole vCPU on the 4-vCPU host whose servers may
    move (none moved within the cooldown): 125 %, so the manual cluster's plan
    moves two of them off, down to [drs] place_now (90 %); from one source, so
    one after the other."""
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    for server in scenario.list_servers(compute):
        compute.delete('/servers/%s/metadata/drs_trace' % server['id'])
    fresh = scenario.boot_spread(cloud, compute, prefix='drs-plan', per_host=5,
                                 hosts=[_host_free_to_move(compute)])
    _tag(compute, [{'id': uuid} for uuid in fresh], **BUSY)
    limits = os.path.join(cloud.etc, 'nova-drs', 'one-at-a-time.conf')
    with open(limits, 'w') as handle:
        handle.write('[loadbalancer]\nmax_migrations_per_host = 1\n'
                     'max_migrations_per_destination = 1\n')
    ha = _ha_conf(cloud)
    _stop_daemons(cloud)
    leader, standby = 'nova-loadbalancer-plan-leader', 'nova-loadbalancer-plan-standby'
    cloud.start_daemon(leader, ha, limits)
    scenario.wait_for('%s leads' % leader, lambda: _leader(cloud, [leader]), 90, 1)
    cloud.start_daemon(standby, ha, limits)
    plan, servers, since = _approve_until_mid_plan(compute, fresh)
    try:
        cloud._signal(cloud.running()[leader], signal.SIGKILL)
        scenario.wait_for('%s leads' % standby, lambda: _leader(cloud, [standby]), 90, 1)

        def finished():
            shown = scenario.ok(compute.get('/loadbalancer/plans/%s' % plan['id']))['plan']
            return shown if shown['status'] in ('done', 'failed') else None

        shown = scenario.wait_for('plan %s finished by the standby' % plan['id'], finished)
    finally:
        _untag(compute, servers, 'drs_migration_seconds')
    cloud.stop_process(leader)  # forgets its pid file
    migrations = [action for action in shown['actions'] if action['type'] == 'migrate']
    assert 'done' in [action['status'] for action in migrations], shown
    # An action is done once nova accepted it: its migration may still run.
    scenario.wait_for('the plan\'s migrations over', lambda: all(
        m['status'] in ('completed', 'error', 'failed', 'cancelled')
        for action in migrations
        for m in _moves_since(compute, action['instance'], None, since)), 120, 1)
    for action in migrations:
        moves = [m['status'] for m in _moves_since(compute, action['instance'], None, since)]
        if action['status'] == 'done':
            assert moves == ['completed'], (action, moves)
        else:   # skipped or failed: never moved, asked at most once
            assert 'completed' not in moves and len(moves) <= 1, (action, moves)
    # A suspend the plan held may still be under way (the invariants allow
    # no host in transit): settled first, then woken again for the next
    # scenarios.
    for host in [a['host'] for a in shown['actions'] if a['type'] == 'suspend']:
        settled = scenario.wait_for('%s suspended or active' % host, lambda host=host: (
            scenario.state_of(compute, host) in ('active', 'suspended')))
        if settled and scenario.state_of(compute, host) == 'suspended':
            scenario.admin_action(compute, 'unsuspend_host', host)
            scenario.wait_for('%s active again' % host, lambda host=host: (
                scenario.state_of(compute, host) == 'active'))
    scenario.check_invariants(cloud, compute)
    # The next scenarios run with the shipped limits again, without these servers.
    cloud.stop_process(standby)
    cloud.start_daemon('nova-loadbalancer-after-plan', ha)
    scenario.wait_for('a leader again',
                      lambda: _leader(cloud, ['nova-loadbalancer-after-plan']), 90, 1)
    for uuid in fresh:
        scenario.ok(compute.delete('/servers/%s' % uuid), 204)
    scenario.wait_for('drs-plan servers deleted',
                      lambda: not scenario.list_servers(compute, '^drs-plan'), 120)


def _woken_host(compute):
    if 'woken' not in scenario.STATE:
        pytest.fail('the overload scenario woke no host', pytrace=False)
    return scenario.STATE['woken']


def test_a_bmc_that_does_not_answer_puts_its_host_in_error_and_nothing_is_lost(cloud):
    """The suspend command and every later power status time out: the host,
    empty and disabled, is asked again each cycle and goes to error once
    [loadbalancer] suspend_timeout (30 s here) has passed.

    The daemon is restarted with [drs_power] timeout = QUICK_POWER_TIMEOUT:
    with the shipped 30 s, the command and the status call after it each
    held a cycle for 30 s before the host could be declared in error."""
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    host = _woken_host(compute)
    _restart_daemon_with(cloud, 'nova-loadbalancer-quick-power', 'drs_power', 'timeout',
                         QUICK_POWER_TIMEOUT)
    mute = bmc.mute_file(cloud.workdir, host)
    os.makedirs(os.path.dirname(mute), exist_ok=True)
    open(mute, 'w').close()
    try:
        scenario.admin_action(compute, 'suspend_host', host)

        def failed():
            record = scenario.drs_hosts(compute)[host]
            assert record['suspend_state'] != 'suspended', record
            return record if record['suspend_state'] == 'error' else None

        record = scenario.wait_for('host %s in error (silent BMC)' % host, failed, 300)
    finally:
        os.unlink(mute)
    assert record['state_reason'], record
    scenario.STATE['error'] = host
    scenario.check_invariants(cloud, compute)


def _wake_one_if_alone(compute):
    """The underload scenario may have suspended two hosts: an admin wakes one."""
    hosts = scenario.drs_hosts(compute)
    active = [h for h, r in hosts.items() if r['suspend_state'] == 'active'
              and r['power_driver']]
    asleep = sorted(h for h, r in hosts.items() if r['suspend_state'] == 'suspended')
    if len(active) < 2 and asleep:
        scenario.admin_action(compute, 'unsuspend_host', asleep[0])
        scenario.wait_for('%s active again' % asleep[0],
                          lambda: scenario.state_of(compute, asleep[0]) == 'active')


def test_a_host_that_does_not_come_back_goes_to_error_and_nothing_is_lost(cloud):
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    _wake_one_if_alone(compute)
    hosts = scenario.drs_hosts(compute)
    candidates = sorted(h for h, r in hosts.items()
                        if r['suspend_state'] == 'active' and r['power_driver'])
    if len(candidates) < 2:
        pytest.fail('needs two active hosts with a power driver: %s' % hosts, pytrace=False)
    host = candidates[0]
    # Idle load: only the admin's unsuspend below wakes the host. So the
    # daemon may give up on a wake sooner than the cloud's WAKE_TIMEOUT,
    # which real wakes on a loaded CI machine need: restarted with the
    # option's minimum, the error comes a minute earlier.
    for server in scenario.list_servers(compute):
        compute.delete('/servers/%s/metadata/drs_trace' % server['id'])
    _restart_daemon_with(cloud, 'nova-loadbalancer-quick-wake', 'loadbalancer', 'wake_timeout',
                         QUICK_WAKE_TIMEOUT)
    noboot = bmc.noboot_file(cloud.workdir, host)
    os.makedirs(os.path.dirname(noboot), exist_ok=True)
    open(noboot, 'w').close()
    try:
        scenario.admin_action(compute, 'suspend_host', host)
        scenario.wait_for('host %s suspended' % host, lambda: scenario.drs_hosts(compute)[host][
            'suspend_state'] in ('suspended', 'waking', 'error'))
        scenario.admin_action(compute, 'unsuspend_host', host, allowed=(202, 409))
        record = scenario.wait_for('host %s in error after wake_timeout' % host,
                       lambda: (lambda r: r if r['suspend_state'] == 'error' else None)(
                           scenario.drs_hosts(compute)[host]),
                       QUICK_WAKE_TIMEOUT + 120)
    finally:
        os.unlink(noboot)
    assert record['state_reason'], record
    assert 'nova-compute-%s' % host in cloud.failed(), 'nova-compute came back'
    # The cluster carries on: a new server boots elsewhere, the others stay ACTIVE.
    server = scenario.ok(compute.post('/servers', json={'server': {
        'name': 'drs-load-after-error', 'imageRef': cloud.image, 'flavorRef': cloud.flavor,
        'networks': 'none'}}), 202)['server']

    def active():
        current = scenario.ok(compute.get('/servers/%s' % server['id']))['server']
        assert current['status'] != 'ERROR', current.get('fault')
        return current if current['status'] == 'ACTIVE' else None

    assert scenario.wait_for('a new server ACTIVE', active, 120)['OS-EXT-SRV-ATTR:host'] != host
    scenario.check_invariants(cloud, compute)
