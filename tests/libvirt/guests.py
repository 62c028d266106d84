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

"""The libvirt tier's steps on guests through nova's API: boot one, read its
console, wait for its live migration; the checks that it still runs.

A guest (image.py) prints ``DRS-GUEST-READY burn=N`` once at boot, then
``alive N`` every two seconds: the counter going on past where it stood after
a move, with no second marker, is the proof that the same guest runs on the
destination. Failures end in one line with the console's tail.
"""

import os
import time

import pytest

from tests.libvirt import nova_hosts


def log(line):
    print('libvirt/nova: ' + line, flush=True)


def marker(burn):
    return 'DRS-GUEST-READY burn=%d' % burn


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
    """The console's last ``length`` lines; its whole log (nova's tail of
    100 KB) for None. Not -1: nova's ``_tail_log`` takes it as a slice and
    drops the first line, the boot marker."""
    body = {} if length is None else {'length': length}
    response = compute.post('/servers/%s/action' % server_id,
                            json={'os-getConsoleOutput': body})
    assert response.status_code == 200, response.text
    return response.json()['output']


def assert_no_oops(compute, server_id, when):
    """The guest's whole console holds no kernel oops, BUG or trace."""
    text = console(compute, server_id, length=None).replace('\r', '')
    found = nova_hosts.OOPS.search(text)
    if found:
        pytest.fail('guest kernel trouble %s:\n%s' % (
            when, text[max(0, found.start() - 200):found.start() + 2000]), pytrace=False)


def boot(nova, compute, host, burn=nova_hosts.BURN, name='drs-lv-guest', flavor=None):
    """A server burning ``burn`` % on ``host`` (admin ``host`` field), ACTIVE
    and counting on its console; its id. ``flavor``: the cloud's 128 MiB one
    unless given."""
    response = compute.post('/servers', json={'server': {
        'name': name, 'imageRef': nova.machine(burn),
        'flavorRef': flavor or nova.cloud.flavor, 'networks': 'none', 'host': host.name}})
    assert response.status_code == 202, response.text
    server_id = response.json()['server']['id']
    _found, took = wait_for('server ACTIVE', lambda: server(
        compute, server_id)['status'] == 'ACTIVE', timeout=300)
    log('server %s (%s, burn %d %%) ACTIVE on %s in %.1f s' % (
        server_id, name, burn, host.name, took))
    text, took = wait_for('boot marker and alive 2 on the console', lambda: (
        lambda out: out if marker(burn) in out and 2 in nova_hosts.alive(out) else None)(
            console(compute, server_id)), timeout=180, detail=lambda: tail(compute, server_id))
    log('console: marker and counter after %.1f s more (%s)' % (took, nova_hosts.alive(text)[-1]))
    return server_id


def goes_on(compute, server_id, before, burn, when, moved=True):
    """The counter passes ``before`` (the last count seen), no second boot, no
    oops on the whole console; the new counts.

    A guest that ``moved`` has a console log begun by the migration on its
    new host: no boot marker at all; one that stayed, its own boot's only.
    """
    after, _took = wait_for('alive counter of %s going on %s' % (server_id, when), lambda: (
        lambda counts: counts if counts and counts[-1] > before else None)(
            nova_hosts.alive(console(compute, server_id))), timeout=60,
        detail=lambda: tail(compute, server_id))
    boots = console(compute, server_id, length=None).count(marker(burn))
    assert boots == (0 if moved else 1), 'the guest %s booted again %s (%d markers)' % (
        server_id, when, boots)
    assert_no_oops(compute, server_id, when)
    return after


def migrations(compute, server_id):
    """The server's live migrations, oldest first; a failed one fails the test
    at once (nova puts the server back ACTIVE on its source)."""
    response = compute.get('/os-migrations?instance_uuid=%s' % server_id)
    assert response.status_code == 200, response.text
    found = sorted((m for m in response.json()['migrations']
                    if m['migration_type'] == 'live-migration'), key=lambda m: m['id'])
    failed = [m for m in found if m['status'] in ('error', 'failed', 'cancelled')]
    if failed:
        pytest.fail('live migration %s of %s: %s (see the nova-compute logs)'
                    % (failed[0]['id'], server_id, failed[0]['status']), pytrace=False)
    return found


def migration_done(compute, server_id, destination, count=1):
    """The server's ``count``-th completed live migration, once nova shows it
    ACTIVE on ``destination``."""
    done = [m for m in migrations(compute, server_id) if m['status'] == 'completed']
    current = server(compute, server_id)
    if len(done) >= count and current['status'] == 'ACTIVE' and \
            current['OS-EXT-SRV-ATTR:host'] == destination.name:
        return done[-1]
    return None


def live_migrate(compute, server_id, source, destination, what='the guest'):
    """nova's live migration of the server to ``destination`` (``block_migration:
    auto``: a block migration here), waited for until ACTIVE there; the last
    count seen before it and the completed migration."""
    before = nova_hosts.alive(console(compute, server_id))[-1]
    response = compute.post('/servers/%s/action' % server_id, json={
        'os-migrateLive': {'host': destination.name, 'block_migration': 'auto'}})
    assert response.status_code == 202, response.text
    migration, took = wait_for('ACTIVE on %s, migration completed' % destination.name,
                               lambda: migration_done(compute, server_id, destination), 600)
    log('live migration of %s %s -> %s through nova (block_migration auto): %.1f s from '
        'the request (migration %s: %s -> %s)' % (
            what, source.name, destination.name, took, migration['id'],
            migration['created_at'], migration['updated_at']))
    return before, migration


def runs_only_on(nova, compute, server_id, host):
    """libvirt agrees with nova: the domain runs on ``host``, on no other host,
    and no other host keeps its instance dir (no shared storage: nova removes it)."""
    domain = server(compute, server_id)['OS-EXT-SRV-ATTR:instance_name']
    assert host.virsh('domstate', domain).stdout.strip() == 'running', (server_id, host.name)
    for other in nova.hosts:
        if other is host:
            continue
        if other.pid is not None:  # a host powered off runs nothing
            assert domain not in other.virsh('list', '--all', '--name').stdout.split(), \
                (server_id, other.name)
        assert not os.path.exists(other.path(nova_hosts.NOVA_DIR + '/instances/' + server_id))
