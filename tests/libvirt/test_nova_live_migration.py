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

"""A running guest live-migrates between two libvirt hosts through nova's API.

nova-compute runs nova's real ``libvirt.LibvirtDriver`` on each libvirt host
(nova_hosts.py). A server is booted on host 1 through nova's API (the admin's
``host`` field, microversion 2.74) from the UEC-style guest; its console
(``os-getConsoleOutput``) shows the boot marker and the ``alive N`` counter.

1. It is live-migrated with ``block_migration: 'auto'`` (no shared storage:
   a block migration) to host 2; the test waits until nova shows it ACTIVE
   on host 2 with its migration ``completed``, then reads the console again:
   the counter goes on past where it stood, without a new boot (the
   destination's console log begins at the migration and holds no marker),
   and nova removed the instance dir from host 1.
2. nova-drs moves it back: the admin's ``suspend_host`` on host 2 (power
   driver ``ipmi`` towards its virtual BMC, bmc.py) makes
   ``nova-loadbalancer`` live-migrate every server off host 2 through nova's
   API; the test waits for the second ``completed`` migration with the
   server ACTIVE on host 1, and for the counter going on there; then the
   daemon powers host 2 off over IPMI (the BMC stops its nova-compute and
   libvirtd) and declares it ``suspended``.
3. ``unsuspend_host``: the daemon powers host 2 on over IPMI (libvirtd and
   nova-compute start again over the same state), nova reports its compute
   service up and the daemon declares the host ``active``.
4. nova-drs's statistics of the guest, as the shipped ``instance_stats``
   plugin measured them inside host 1's nova-compute (libvirt domain stats
   through ``get_instance_diagnostics``) and nova-drs-collector stored them:
   the CPU of its samples taken wholly on host 1 after the move is within
   BURN_TOLERANCE percentage points of the burn it was asked for.

Measured on 2 cores (TCG): the whole module 95-98 s (hosts 0.7 s with the
capabilities cache, control plane 34-37 s, computes 12-14 s), boot to
ACTIVE 2.1 s and marker 4.3 s later, nova's live migration 4.3-5.3 s from
the request to ``completed`` + ACTIVE on host 2, nova-loadbalancer's 4.3-9.9 s
from the ``suspend_host`` request (one 5 s daemon period included), host 2
suspended 11.6 s after the move and active 19.9 s after ``unsuspend_host``.
Seen once
in the first runs: the guest stopped counting right after the second move
(an oops in an RCU callback was reported, the log kept no trace); 140 later
nova-driven moves did not repeat it, and the same two moves with virsh alone
(test_live_migration.py's domain) kept it alive. After each move the whole
console must hold no oops, BUG or call trace (``assert_no_oops``: the counter
alone may still tick after a non-fatal oops); the console's tail, or the
oops, is in the failure message. ``python -m tests.libvirt.soak`` repeats
the moves in a loop beside this tier (its own namespaces and databases).
"""

import os
import time

import pymysql
import pytest

from tests.integration import cloud as minicloud
from tests.libvirt import bmc as lvbmc
from tests.libvirt import hosts as lvhosts
from tests.libvirt import nova_hosts

pytestmark = pytest.mark.libvirt

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STATE = os.path.join(REPO, 'state', 'libvirt')
MARKER = 'DRS-GUEST-READY burn=%d' % nova_hosts.BURN
MOVED = {}
#: How far nova-drs's statistics may be from the burn the guest was asked for.
BURN_TOLERANCE = 10


def log(line):
    print('libvirt/nova: ' + line, flush=True)


@pytest.fixture(scope='module')
def nova(image):
    """Hosts, control plane and libvirt computes for the module; all gone after."""
    cloud = nova_hosts.NovaLibvirtCloud(STATE, log=log)
    try:
        cloud.up(image)
    except (lvhosts.HostsError, nova_hosts.NovaHostsError,
            nova_hosts.minicloud.CloudError) as exc:
        pytest.fail(str(exc), pytrace=False)
    cloud.bmcs = lvbmc.start(cloud)
    try:
        yield cloud
    finally:
        cloud.down()


def wait_for(what, probe, timeout, detail=None):
    """Poll ``probe`` until it returns something true; that and the seconds it took.

    ``detail()``, when given, is added to the failure message (the console's tail).
    """
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        found = probe()
        if found:
            return found, time.monotonic() - started
        time.sleep(1)
    pytest.fail('%s: not within %d s%s' % (what, timeout, (
        '; console ends:\n' + detail()) if detail else ''), pytrace=False)


def tail(compute, server_id, lines=12):
    """The last lines of the server's console, for a failure message."""
    return '\n'.join(console(compute, server_id).replace('\r', '').splitlines()[-lines:])


def server(compute, server_id):
    response = compute.get('/servers/%s' % server_id)
    assert response.status_code == 200, response.text
    found = response.json()['server']
    assert found['status'] != 'ERROR', found.get('fault')
    return found


def console(compute, server_id, length=200):
    response = compute.post('/servers/%s/action' % server_id,
                            json={'os-getConsoleOutput': {'length': length}})
    assert response.status_code == 200, response.text
    return response.json()['output']


def assert_no_oops(compute, server_id, when):
    """The guest's whole console holds no kernel oops, BUG or trace."""
    text = console(compute, server_id, length=-1).replace('\r', '')
    found = nova_hosts.OOPS.search(text)
    if found:
        pytest.fail('guest kernel trouble %s:\n%s' % (
            when, text[max(0, found.start() - 200):found.start() + 2000]), pytrace=False)


def boot(nova, compute, host):
    """A server on ``host`` (admin ``host`` field), ACTIVE and counting on its console."""
    response = compute.post('/servers', json={'server': {
        'name': 'drs-lv-guest', 'imageRef': nova.images['ami'],
        'flavorRef': nova.cloud.flavor, 'networks': 'none', 'host': host.name}})
    assert response.status_code == 202, response.text
    server_id = response.json()['server']['id']
    _found, took = wait_for('server ACTIVE', lambda: server(
        compute, server_id)['status'] == 'ACTIVE', timeout=300)
    log('server %s ACTIVE on %s in %.1f s' % (server_id, host.name, took))
    text, took = wait_for('boot marker and alive 2 on the console', lambda: (
        lambda out: out if MARKER in out and 2 in nova_hosts.alive(out) else None)(
            console(compute, server_id)), timeout=180, detail=lambda: tail(compute, server_id))
    log('console: marker and counter after %.1f s more (%s)' % (took, nova_hosts.alive(text)[-1]))
    return server_id


def migration_done(compute, server_id, destination, count=1):
    """The server's ``count``-th completed live migration, once nova shows it
    ACTIVE on ``destination``.

    A failed one fails the test at once (nova puts the server back ACTIVE
    on its source).
    """
    response = compute.get('/os-migrations?instance_uuid=%s' % server_id)
    assert response.status_code == 200, response.text
    migrations = [m for m in response.json()['migrations']
                  if m['migration_type'] == 'live-migration']
    failed = [m for m in migrations if m['status'] in ('error', 'failed', 'cancelled')]
    if failed:
        pytest.fail('live migration %s: %s (see the nova-compute logs)'
                    % (failed[0]['id'], failed[0]['status']), pytrace=False)
    current = server(compute, server_id)
    done = sorted((m for m in migrations if m['status'] == 'completed'),
                  key=lambda m: m['id'])
    if len(done) >= count and current['status'] == 'ACTIVE' and \
            current['OS-EXT-SRV-ATTR:host'] == destination.name:
        return done[-1]
    return None


def test_live_migration_through_nova_api(nova):
    host1, host2 = nova.hosts[0], nova.hosts[1]
    compute = nova.compute()
    server_id = boot(nova, compute, host1)
    before = nova_hosts.alive(console(compute, server_id))
    response = compute.post('/servers/%s/action' % server_id, json={
        'os-migrateLive': {'host': host2.name, 'block_migration': 'auto'}})
    assert response.status_code == 202, response.text
    migration, took = wait_for('ACTIVE on %s, migration completed' % host2.name,
                               lambda: migration_done(compute, server_id, host2), 600)
    log('live migration %s -> %s through nova (block_migration auto): %.1f s '
        '(migration %s: %s -> %s)' % (host1.name, host2.name, took, migration['id'],
                                      migration['created_at'], migration['updated_at']))
    domain = server(compute, server_id)['OS-EXT-SRV-ATTR:instance_name']
    assert host2.virsh('domstate', domain).stdout.strip() == 'running'
    assert domain not in host1.virsh('list', '--all', '--name').stdout.split()

    after, took = wait_for('alive counter going on after the move', lambda: (
        lambda counts: counts if counts and counts[-1] > before[-1] else None)(
            nova_hosts.alive(console(compute, server_id))), timeout=60,
        detail=lambda: tail(compute, server_id))
    text = console(compute, server_id)
    log('console after the move: host1 counted to %d, host2 shows %s (%.1f s after '
        'nova reported it done)' % (before[-1], after[-3:], took))
    assert MARKER not in text, 'the guest booted again on host2'
    assert_no_oops(compute, server_id, 'after the move to %s' % host2.name)
    # nova cleaned the source up: no shared storage, the disk was copied.
    instance_dir = nova_hosts.NOVA_DIR + '/instances/' + server_id
    assert not os.path.exists(host1.path(instance_dir))
    assert os.path.exists(host2.path(instance_dir + '/disk'))
    MOVED['server'] = server_id


def test_nova_loadbalancer_live_migrates_the_guest_off_a_host(nova):
    """suspend_host on host 2: nova-loadbalancer moves the guest back through nova."""
    if 'server' not in MOVED:
        pytest.fail('no server was moved by the previous test', pytrace=False)
    server_id, (host1, host2) = MOVED['server'], nova.hosts[:2]
    compute, drs = nova.compute(), nova.cloud.client('compute', raise_exc=False)
    # The shipped ipmi driver towards host 2's virtual BMC (bmc.py).
    response = drs.post('/loadbalancer/action', json={'set_power': {
        'host': host2.name, 'driver': 'ipmi', 'mode': 'off',
        'options': nova.bmcs[host2.name]}})
    assert response.status_code == 200, response.text
    before = nova_hosts.alive(console(compute, server_id))
    response = drs.post('/loadbalancer/action', json={'suspend_host': {'host': host2.name}})
    assert response.status_code == 202, response.text
    migration, took = wait_for('ACTIVE on %s, second migration completed' % host1.name,
                               lambda: migration_done(compute, server_id, host1, 2), 300)
    log('nova-loadbalancer: suspend_host %s -> guest on %s, migration %s completed '
        '%.1f s after the request (%s -> %s)' % (
            host2.name, host1.name, migration['id'], took, migration['created_at'],
            migration['updated_at']))
    after, _took = wait_for('alive counter going on after the second move', lambda: (
        lambda counts: counts if counts and counts[-1] > before[-1] else None)(
            nova_hosts.alive(console(compute, server_id))), timeout=60,
        detail=lambda: tail(compute, server_id))
    assert MARKER not in console(compute, server_id), 'the guest booted again on host1'
    assert_no_oops(compute, server_id, 'after the move back to %s' % host1.name)
    domain = server(compute, server_id)['OS-EXT-SRV-ATTR:instance_name']
    assert host1.virsh('domstate', domain).stdout.strip() == 'running'
    assert domain not in host2.virsh('list', '--all', '--name').stdout.split()
    assert not os.path.exists(host2.path(nova_hosts.NOVA_DIR + '/instances/' + server_id))
    log('console: host2 counted to %d, host1 goes on %s' % (before[-1], after[-3:]))
    MOVED['back'] = migration['updated_at'].replace('T', ' ').split('.')[0]
    _state, took = wait_for('%s suspended' % host2.name,
                            lambda: _drs_state(drs, host2.name) == 'suspended', 180)
    log('%s suspended over IPMI %.1f s after the move' % (host2.name, took))
    assert host2.pid is None, 'its libvirtd still runs'
    assert 'nova-compute-' + host2.name not in nova.cloud.running()


def _drs_state(drs, host):
    return drs.get('/loadbalancer/%s' % host).json()['host']['suspend_state']


def test_nova_loadbalancer_wakes_the_libvirt_host_over_ipmi(nova):
    """unsuspend_host: the BMC starts libvirtd and nova-compute again, nova sees
    the same compute node up, the daemon declares the host active."""
    if 'back' not in MOVED:
        pytest.fail('host 2 was not suspended by the previous test', pytrace=False)
    host2 = nova.hosts[1]
    drs = nova.cloud.client('compute', raise_exc=False)
    response = drs.post('/loadbalancer/action', json={'unsuspend_host': {'host': host2.name}})
    assert response.status_code == 202, response.text
    _state, took = wait_for('%s active again' % host2.name,
                            lambda: _drs_state(drs, host2.name) == 'active', 180)
    log('%s woken over IPMI: active %.1f s after the request' % (host2.name, took))
    assert host2.virsh('version', check=False).returncode == 0
    services = drs.get('/os-services?binary=nova-compute&host=%s' % host2.name).json()
    assert [(s['state'], s['status']) for s in services['services']] == [('up', 'enabled')]
    # Starting libvirtd and nova-compute takes this machine's CPU from the
    # guest on host 1: the statistics test counts only samples after it.
    MOVED['woken'] = time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())


def _instance_samples(server_id, host, since):
    """(sampled_at, cpu_used_percent) of the server's samples on ``host`` whose
    period began after ``since`` (naive UTC): measured wholly there."""
    connection = pymysql.connect(host=minicloud.DB['host'], port=minicloud.DB['port'],
                                 user=minicloud.DB['user'], password=minicloud.DB['password'],
                                 database=nova_hosts.NAME + '_drs')
    try:
        with connection.cursor() as cursor:
            cursor.execute('SELECT sampled_at, cpu_used_percent FROM instance_stats '
                           'WHERE instance_uuid = %s AND host = %s AND prev_updated_at > %s '
                           'AND cpu_used_percent IS NOT NULL ORDER BY sampled_at',
                           (server_id, host, since))
            return list(cursor.fetchall())
    finally:
        connection.close()


def test_instance_stats_measure_the_guests_burn(nova):
    """What nova-drs's balancer starts from on a libvirt host: the guest's CPU
    as instance_stats measured it, within BURN_TOLERANCE of its burn."""
    if 'server' not in MOVED or 'back' not in MOVED:
        pytest.fail('the guest was not moved back by nova-loadbalancer', pytrace=False)
    server_id, host1 = MOVED['server'], nova.hosts[0]
    since = MOVED.get('woken', MOVED['back'])
    samples, took = wait_for('three samples of %s on %s since %s' % (
        server_id, host1.name, since), lambda: (lambda found: found[:3] if len(found) >= 3
                                                else None)(
            _instance_samples(server_id, host1.name, since)), 120)
    percents = [round(percent, 1) for _at, percent in samples]
    log('instance_stats of the guest on %s (burn %d %%): %s %% (%d samples, %.1f s)'
        % (host1.name, nova_hosts.BURN, percents, len(samples), took))
    for percent in percents:
        assert abs(percent - nova_hosts.BURN) <= BURN_TOLERANCE, percents
