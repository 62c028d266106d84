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
5. One more server per size of GUEST_SIZES_MB live-migrates host 1 -> host 2
   through nova's API, alive after it: the figure of the migration's time
   per guest size (its memory is mostly untouched: QEMU sends zero pages
   cheaply, as for any idle guest).

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
from tests.libvirt import guests
from tests.libvirt import nova_hosts
from tests.libvirt.guests import log
from tests.libvirt.guests import wait_for

pytestmark = pytest.mark.libvirt

MOVED = {}
#: How far nova-drs's statistics may be from the burn the guest was asked for.
BURN_TOLERANCE = 10
#: Guest memory sizes whose live migration time is measured (the cloud's
#: flavor, 128 MiB, is the first test's).
GUEST_SIZES_MB = (512, 2048)


def test_live_migration_through_nova_api(nova):
    host1, host2 = nova.hosts[0], nova.hosts[1]
    compute = nova.compute()
    server_id = guests.boot(nova, compute, host1)
    before, _migration = guests.live_migrate(compute, server_id, host1, host2)
    after = guests.goes_on(compute, server_id, before, nova_hosts.BURN,
                           'after the move to %s' % host2.name)
    log('console after the move: host1 counted to %d, host2 shows %s' % (before, after[-3:]))
    # nova cleaned the source up: no shared storage, the disk was copied.
    guests.runs_only_on(nova, compute, server_id, host2)
    assert os.path.exists(host2.path(nova_hosts.NOVA_DIR + '/instances/%s/disk' % server_id))
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
        'options': nova.cloud.bmc_options(host2.name, 'ipmi')}})
    assert response.status_code == 200, response.text
    before = nova_hosts.alive(guests.console(compute, server_id))
    response = drs.post('/loadbalancer/action', json={'suspend_host': {'host': host2.name}})
    assert response.status_code == 202, response.text
    migration, took = wait_for('ACTIVE on %s, second migration completed' % host1.name,
                               lambda: guests.migration_done(compute, server_id, host1, 2), 300)
    log('nova-loadbalancer: suspend_host %s -> guest on %s, migration %s completed '
        '%.1f s after the request (%s -> %s)' % (
            host2.name, host1.name, migration['id'], took, migration['created_at'],
            migration['updated_at']))
    after = guests.goes_on(compute, server_id, before[-1], nova_hosts.BURN,
                           'after the move back to %s' % host1.name)
    guests.runs_only_on(nova, compute, server_id, host1)
    log('console: host2 counted to %d, host1 goes on %s' % (before[-1], after[-3:]))
    MOVED['back'] = migration['updated_at'].replace('T', ' ').split('.')[0]
    _state, took = wait_for('%s suspended' % host2.name,
                            lambda: _drs_state(drs, host2.name) == 'suspended', 180)
    log('%s suspended over IPMI %.1f s after the move' % (host2.name, took))
    assert host2.pid is None, 'its libvirtd still runs'
    assert 'nova-compute-' + host2.name in nova.cloud.failed()


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


@pytest.mark.parametrize('ram_mb', GUEST_SIZES_MB)
def test_live_migration_time_per_guest_size(nova, ram_mb):
    host1, host2 = nova.hosts[:2]
    compute = nova.compute()
    name = 'drs.lv.%dm' % ram_mb
    response = compute.post('/flavors', json={'flavor': {
        'name': name, 'ram': ram_mb, 'vcpus': 1, 'disk': 1}})
    assert response.status_code == 200, response.text
    server_id = guests.boot(nova, compute, host1, name='drs-lv-%dm' % ram_mb,
                            flavor=response.json()['flavor']['id'])
    before, _migration = guests.live_migrate(compute, server_id, host1, host2,
                                             'a %d MiB guest' % ram_mb)
    guests.goes_on(compute, server_id, before, nova_hosts.BURN,
                   'after the move to %s' % host2.name)
    guests.runs_only_on(nova, compute, server_id, host2)
    assert compute.delete('/servers/%s' % server_id).status_code == 204
