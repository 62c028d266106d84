"""The daemon's own job on the multi-process mini-cloud: load it measured, power it switched.

Load comes only from the servers' traces (tests/integration/trace_driver.py,
chosen through server metadata), measured by the ``cpu.drs`` monitor inside
each nova-compute, published over RabbitMQ and stored by nova-drs-collector;
power goes through the shipped ``ipmi`` and ``redfish`` drivers to the
hosts' virtual BMCs (bmc.py). Nothing here writes statistics or DRS states.

The scenarios build on each other in this order (one cloud, a few minutes):
underload -> one host emptied and suspended over IPMI; overload -> that host
woken over Redfish and given servers back. Each ends with ``check_invariants``.
Figures (underload -> suspended, wake -> first migration) are printed and
kept in ``<workdir>/figures.json``.
"""

import datetime
import json
import os
import time

import pytest

from tests.integration import bmc
from tests.integration import cloud as minicloud

pytestmark = pytest.mark.integration

SERVERS_PER_HOST = 3
SCENARIO_TIMEOUT = 240
# PlanetLab sample traces whose load rises between samples 42 and 66 (README
# of data/planetlab-sample); scaled so that the woken host is needed.
RISING_START = 42
RISING_SCALE = 4
STATE = {}


def _compute(cloud):
    return cloud.client('compute', default_microversion='2.95', raise_exc=False)


def _wait(what, probe, timeout=SCENARIO_TIMEOUT, interval=2):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    pytest.fail('%s: not reached within %ds (last seen: %r)' % (what, timeout, last),
                pytrace=False)


def _ok(response, status=200):
    assert response.status_code == status, '%s %s: %s' % (
        response.request.method, response.request.url, response.text[-2000:])
    return response.json() if response.content else None


def _servers(compute, name='^drs-load'):
    query = '&name=%s' % name if name else ''
    return _ok(compute.get('/servers/detail?all_tenants=1' + query))['servers']


def _drs_hosts(compute):
    return {h['host']: h for h in _ok(compute.get('/loadbalancer'))['hosts']}


def _services(compute):
    return {s['host']: s for s in _ok(compute.get('/os-services?binary=nova-compute'))
            ['services']}


def _provider(cloud, host):
    placement = cloud.client('placement', raise_exc=True)
    return placement.get('/resource_providers?name=%s' % host).json()[
        'resource_providers'][0]['uuid']


def _allocations(cloud, server_id):
    placement = cloud.client('placement', raise_exc=True, default_microversion='1.28')
    return set(placement.get('/allocations/%s' % server_id).json()['allocations'])


def _migrations(compute, server_id):
    return _ok(compute.get('/os-migrations?instance_uuid=%s' % server_id))['migrations']


def _utc(text):
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc)


def check_invariants(cloud, compute, timeout=45):
    """``cloud_consistent`` holds, at the latest once nova noticed the last power
    change (a powered-off compute stays "up" for ``service_down_time``)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return cloud_consistent(cloud, compute)
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(3)


def cloud_consistent(cloud, compute, expected_status='ACTIVE'):
    """The shared end of every scenario: nothing lost, DRS and nova agree.

    Every server (of every test) ACTIVE on a host that is active in DRS, up,
    enabled and powered on, with placement allocations on that host only; no
    suspended host with servers; each host's DRS state matches its
    nova-compute service, its process and what its BMC reports.
    """
    drs = _drs_hosts(compute)
    services = _services(compute)
    servers = _servers(compute, name=None)
    on_host = {}
    for server in servers:
        host = server['OS-EXT-SRV-ATTR:host']
        on_host.setdefault(host, []).append(server['id'])
        assert server['status'] == expected_status, server
        assert drs[host]['suspend_state'] == 'active', (host, drs[host])
        assert _allocations(cloud, server['id']) == {_provider(cloud, host)}, server['id']
    for host, record in drs.items():
        state, service = record['suspend_state'], services[host]
        assert state in ('active', 'suspended', 'error'), (host, record)
        alive = 'nova-compute-' + host not in cloud.failed()
        if state == 'error':
            # Left for an admin (BMC silent, or never came back): empty.
            assert not on_host.get(host), (host, record)
            continue
        if state == 'suspended':
            assert not on_host.get(host), 'suspended host %s has servers' % host
            assert (service['state'], service['status'], alive) == ('down', 'disabled', False)
        else:
            assert (service['state'], service['status'], alive) == ('up', 'enabled', True), \
                (host, service)
        if record.get('power_driver') in ('ipmi', 'redfish'):
            power = cloud.power_status(record['power_driver'], host)
            assert power == ('off' if state == 'suspended' else 'on'), (host, power)


def _figures(cloud, **figures):
    path = os.path.join(cloud.workdir, 'figures.json')
    known = {}
    if os.path.exists(path):
        with open(path) as handle:
            known = json.load(handle)
    known.update(figures)
    with open(path, 'w') as handle:
        json.dump(known, handle, indent=2)
    print('figures: %s' % json.dumps(figures))


def _boot_spread(cloud, compute):
    """SERVERS_PER_HOST idle servers on each host (admin host placement, 2.74)."""
    # The earlier tiers' servers count against the admin project's quota.
    _ok(compute.put('/os-quota-sets/%s' % cloud.session().get_project_id(), json={
        'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}}))
    ids = []
    for host in minicloud.COMPUTES:
        for index in range(SERVERS_PER_HOST):
            ids.append(_ok(compute.post('/servers', json={'server': {
                'name': 'drs-load-%s-%d' % (host, index), 'imageRef': cloud.image,
                'flavorRef': cloud.flavor, 'networks': 'none', 'host': host}}), 202)
                ['server']['id'])

    def all_active():
        servers = _servers(compute)
        for server in servers:
            assert server['status'] != 'ERROR', server.get('fault')
        return len(servers) == len(ids) and all(s['status'] == 'ACTIVE' for s in servers)

    _wait('%d servers ACTIVE' % len(ids), all_active, 120)
    return ids


def _opt_in(compute):
    """Put the computes in a power_saving DRS cluster, as an operator would:
    hosts outside every drs_policy aggregate are left alone (default_policy none)."""
    name = 'drs-cluster'
    found = [a for a in _ok(compute.get('/os-aggregates'))['aggregates'] if a['name'] == name]
    aggregate = found[0] if found else _ok(compute.post('/os-aggregates', json={
        'aggregate': {'name': name}}))['aggregate']
    for host in minicloud.COMPUTES:
        if host not in (aggregate.get('hosts') or ()):
            aggregate = _ok(compute.post('/os-aggregates/%s/action' % aggregate['id'], json={
                'add_host': {'host': host}}))['aggregate']
    _ok(compute.post('/os-aggregates/%s/action' % aggregate['id'], json={
        'set_metadata': {'metadata': {'drs_policy': 'power_saving'}}}))


def _require_daemon(cloud):
    if cloud.daemon_error:
        pytest.fail('nova-loadbalancer is not running: %s' % cloud.daemon_error,
                    pytrace=False)


def test_underload_empties_a_host_and_suspends_it_over_ipmi(cloud):
    _require_daemon(cloud)
    compute = _compute(cloud)
    _opt_in(compute)
    _boot_spread(cloud, compute)
    placed = {s['id']: s['OS-EXT-SRV-ATTR:host'] for s in _servers(compute)}
    # A deny rule keeps its host on, with its servers.
    denied = minicloud.COMPUTES[-1]
    rule = _ok(compute.post('/loadbalancer/rules', json={'rule': {
        'type': 'host', 'value': '^%s$' % denied, 'allow': False}}), 201)['rule']
    try:
        _underload(cloud, compute, placed, denied)
    finally:
        _ok(compute.delete('/loadbalancer/rules/%s' % rule['id']), 204)


def _underload(cloud, compute, placed, denied):
    before = {host for host, r in _drs_hosts(compute).items()
              if r['suspend_state'] == 'suspended'}
    start = time.monotonic()
    started_at = datetime.datetime.now(datetime.timezone.utc)
    for host in minicloud.COMPUTES:
        _ok(compute.post('/loadbalancer/action', json={'set_power': {
            'host': host, 'driver': 'ipmi', 'mode': 'off',
            'options': cloud.bmc_options(host, 'ipmi')}}))

    def suspended():
        hosts = _drs_hosts(compute)
        for record in hosts.values():
            assert record['suspend_state'] != 'error', record
        fresh = [h for h, r in hosts.items()
                 if r['suspend_state'] == 'suspended' and h not in before]
        return fresh[0] if fresh else None

    host = _wait('a host suspended by the daemon', suspended)
    elapsed = time.monotonic() - start
    assert 'nova-compute-%s' % host in cloud.failed()
    assert cloud.power_status('ipmi', host) == 'off'
    moved = [uuid for uuid, where in placed.items() if where == host]
    durations = []
    for uuid in moved:
        migrations = [m for m in _migrations(compute, uuid)
                      if _utc(m['created_at']) >= started_at and m['source_compute'] == host]
        assert len(migrations) == 1, (uuid, migrations)
        assert migrations[0]['status'] == 'completed', migrations[0]
        durations.append((_utc(migrations[0]['updated_at'])
                          - _utc(migrations[0]['created_at'])).total_seconds())
    assert host != denied
    assert _drs_hosts(compute)[denied]['suspend_state'] == 'active'
    # None of its servers left it (it may have received others).
    assert {uuid for uuid, where in placed.items() if where == denied} <= {
        s['id'] for s in _servers(compute) if s['OS-EXT-SRV-ATTR:host'] == denied}
    check_invariants(cloud, compute)
    STATE['suspended'] = host
    _figures(cloud, underload_to_suspended_s=round(elapsed, 1), servers_on_host=len(moved),
             sum_migration_s=round(sum(durations), 1), period_s=5)


def test_overload_wakes_the_host_over_redfish_and_rebalances(cloud):
    _require_daemon(cloud)
    if 'suspended' not in STATE:
        pytest.fail('the underload scenario suspended no host', pytrace=False)
    compute = _compute(cloud)
    asleep = [h for h, r in _drs_hosts(compute).items() if r['suspend_state'] == 'suspended']
    for host in asleep:
        _ok(compute.post('/loadbalancer/action', json={'set_power': {
            'host': host, 'driver': 'redfish', 'mode': 'off',
            'options': cloud.bmc_options(host, 'redfish')}}))
    traces = sorted(os.listdir(minicloud.TRACE_DIR))
    since = time.time()
    for index, server in enumerate(_servers(compute)):
        _ok(compute.put('/servers/%s/metadata' % server['id'], json={'metadata': {
            'drs_trace': traces[index % len(traces)],
            'drs_trace_start': str(RISING_START), 'drs_trace_since': '%.1f' % since,
            'drs_trace_scale': str(RISING_SCALE)}}))
    start = time.monotonic()

    def woken():
        hosts = _drs_hosts(compute)
        for host in asleep:
            assert hosts[host]['suspend_state'] != 'error', hosts[host]
        awake = [host for host in asleep if hosts[host]['suspend_state'] == 'active']
        return awake[0] if awake else None

    host = _wait('one of %s woken by the daemon' % asleep, woken)
    woke = time.monotonic()
    assert cloud.power_status('redfish', host) == 'on'

    def moved_onto():
        return [s for s in _servers(compute)
                if s['OS-EXT-SRV-ATTR:host'] == host and s['status'] == 'ACTIVE'
                and not s['OS-EXT-STS:task_state']]

    _wait('a server moved onto the woken host %s' % host, moved_onto)
    STATE['woken'] = host
    first_migration = time.monotonic()
    _wait('migrations settled', lambda: not any(
        s['OS-EXT-STS:task_state'] for s in _servers(compute)), 60)
    check_invariants(cloud, compute)
    _figures(cloud, overload_to_awake_s=round(woke - start, 1),
             wake_to_first_migration_s=round(first_migration - woke, 1))


def _admin_action(compute, action, host, allowed=(202,)):
    response = compute.post('/loadbalancer/action', json={action: {'host': host}})
    assert response.status_code in allowed, response.text
    return response.status_code


def _woken_host(compute):
    if 'woken' not in STATE:
        pytest.fail('the overload scenario woke no host', pytrace=False)
    return STATE['woken']


def test_a_bmc_that_does_not_answer_puts_its_host_in_error_and_nothing_is_lost(cloud):
    _require_daemon(cloud)
    compute = _compute(cloud)
    host = _woken_host(compute)
    mute = bmc.mute_file(cloud.workdir, host)
    os.makedirs(os.path.dirname(mute), exist_ok=True)
    open(mute, 'w').close()
    try:
        _admin_action(compute, 'suspend_host', host)

        def failed():
            record = _drs_hosts(compute)[host]
            assert record['suspend_state'] != 'suspended', record
            return record if record['suspend_state'] == 'error' else None

        record = _wait('host %s in error (silent BMC)' % host, failed, 180)
    finally:
        os.unlink(mute)
    assert record['state_reason'], record
    STATE['error'] = host
    check_invariants(cloud, compute)


def test_a_host_that_does_not_come_back_goes_to_error_and_nothing_is_lost(cloud):
    _require_daemon(cloud)
    compute = _compute(cloud)
    hosts = _drs_hosts(compute)
    candidates = sorted(h for h, r in hosts.items()
                        if r['suspend_state'] == 'active' and r['power_driver'])
    if len(candidates) < 2:
        pytest.fail('needs two active hosts with a power driver: %s' % hosts, pytrace=False)
    host = candidates[0]
    # Idle load: only the admin's unsuspend below wakes the host.
    for server in _servers(compute):
        compute.delete('/servers/%s/metadata/drs_trace' % server['id'])
    noboot = bmc.noboot_file(cloud.workdir, host)
    os.makedirs(os.path.dirname(noboot), exist_ok=True)
    open(noboot, 'w').close()
    try:
        _admin_action(compute, 'suspend_host', host)
        _wait('host %s suspended' % host, lambda: _drs_hosts(compute)[host][
            'suspend_state'] in ('suspended', 'waking', 'error'))
        _admin_action(compute, 'unsuspend_host', host, allowed=(202, 409))
        record = _wait('host %s in error after wake_timeout' % host,
                       lambda: (lambda r: r if r['suspend_state'] == 'error' else None)(
                           _drs_hosts(compute)[host]),
                       minicloud.WAKE_TIMEOUT + 120)
    finally:
        os.unlink(noboot)
    assert record['state_reason'], record
    assert 'nova-compute-%s' % host in cloud.failed(), 'nova-compute came back'
    # The cluster carries on: a new server boots elsewhere, the others stay ACTIVE.
    server = _ok(compute.post('/servers', json={'server': {
        'name': 'drs-load-after-error', 'imageRef': cloud.image, 'flavorRef': cloud.flavor,
        'networks': 'none'}}), 202)['server']

    def active():
        current = _ok(compute.get('/servers/%s' % server['id']))['server']
        assert current['status'] != 'ERROR', current.get('fault')
        return current if current['status'] == 'ACTIVE' else None

    assert _wait('a new server ACTIVE', active, 120)['OS-EXT-SRV-ATTR:host'] != host
    check_invariants(cloud, compute)
