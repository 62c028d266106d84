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

"""Soak loop: nova live-migrates one guest back and forth, watching its kernel.

For the guest oops seen once in five ``make libvirt`` runs (NULL pointer in
an RCU callback right after a nova-driven move). Not a test: run as root,
beside ``make libvirt`` if need be (its own namespaces ``drslvc-*``, subnet
10.79.0, databases ``nova_drs_lvc_*`` and vhost)::

    NOVA_DRS_CLOUD_VENV=... .venv/bin/python -m tests.libvirt.soak \\
        --servers 3 --moves 20 --dwell 5 [--cmdline acpi=off] \\
        [--property hw_machine_type=pc] [--option libvirt.mem_stats_period_seconds=0]

Each server is booted on host 1 through nova's API, then moved ``--moves``
times (``os-migrateLive``, ``block_migration: auto``, as nova-loadbalancer
asks), waiting ``--dwell`` seconds on each host; after each move the
console log (the instance dir's ``console.log`` on the host that runs it)
must show the ``alive`` counter going on and no oops. The domain XML nova
made and the console the last host logged are kept in ``--out``.
"""

import argparse
import os
import sys
import time

from tests.libvirt import image as lvimage
from tests.libvirt import nova_hosts

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(line):
    print(time.strftime('%H:%M:%S ') + line, flush=True)


def console(host, server_id):
    """The guest's console as the host running it logs it (nova's console.log)."""
    path = host.path('%s/instances/%s/console.log' % (nova_hosts.NOVA_DIR, server_id))
    try:
        with open(path, errors='replace') as handle:
            return handle.read().replace('\r', '')
    except OSError:
        return ''


def wait(what, probe, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(1)
    raise RuntimeError('%s: not within %d s' % (what, timeout))


def register(nova, args):
    """An ami like nova_hosts.register_guest's, with this run's command line and properties."""
    return nova.register_machine('drs-guest-soak',
                                 ' '.join([nova_hosts.command_line()] + args.cmdline),
                                 **dict(item.split('=', 1) for item in args.property))


def state(compute, server_id):
    found = compute.get('/servers/%s' % server_id).json()['server']
    moves = [m for m in compute.get('/os-migrations?instance_uuid=%s' % server_id).json()[
        'migrations'] if m['migration_type'] == 'live-migration']
    if found['status'] == 'ERROR' or any(m['status'] in ('error', 'failed') for m in moves):
        raise RuntimeError('server or migration failed: %s' % found.get('fault'))
    done = len([m for m in moves if m['status'] == 'completed'])
    return found['status'], found['OS-EXT-SRV-ATTR:host'], done


def soak_one(nova, image_id, args, number):
    """Boot, move ``args.moves`` times; the number of moves the guest survived."""
    compute, hosts = nova.compute(), nova.hosts
    server_id = compute.post('/servers', json={'server': {
        'name': 'drs-soak-%d' % number, 'imageRef': image_id, 'flavorRef': nova.cloud.flavor,
        'networks': 'none', 'host': hosts[0].name}}).json()['server']['id']
    wait('ACTIVE', lambda: state(compute, server_id)[0] == 'ACTIVE', 300)
    wait('alive 2', lambda: 2 in nova_hosts.alive(console(hosts[0], server_id)), 180)
    domain = compute.get('/servers/%s' % server_id).json()['server'][
        'OS-EXT-SRV-ATTR:instance_name']
    with open(os.path.join(args.out, 'domain-%d.xml' % number), 'w') as handle:
        handle.write(hosts[0].virsh('dumpxml', domain).stdout)
    where, last = 0, nova_hosts.alive(console(hosts[0], server_id))[-1]
    for move in range(1, args.moves + 1):
        where, started = 1 - where, time.monotonic()
        compute.post('/servers/%s/action' % server_id, json={'os-migrateLive': {
            'host': hosts[where].name, 'block_migration': 'auto'}})
        expected = ('ACTIVE', hosts[where].name, move)
        wait('move %d' % move, lambda want=expected: state(compute, server_id) == want, 300)
        took = time.monotonic() - started
        time.sleep(args.dwell)
        try:
            wait('counter', lambda host=hosts[where], seen=last: (
                lambda c: c and c[-1] > seen)(nova_hosts.alive(console(host, server_id))), 30)
        except RuntimeError:
            pass
        text = console(hosts[where], server_id)
        counts = nova_hosts.alive(text)
        if nova_hosts.OOPS.search(text) or not counts or counts[-1] <= last:
            time.sleep(3)
            with open(os.path.join(args.out, 'console-%d.txt' % number), 'w') as handle:
                handle.write(console(hosts[where], server_id))
            log('server %d: TROUBLE after move %d (console in %s)' % (number, move, args.out))
            return move - 1
        last = counts[-1]
        log('server %d: move %d to %s in %.1f s, alive %d' % (
            number, move, hosts[where].name, took, last))
    with open(os.path.join(args.out, 'console-%d.txt' % number), 'w') as handle:
        handle.write(console(hosts[where], server_id))
    compute.delete('/servers/%s' % server_id)
    wait('deleted', lambda: compute.get('/servers/%s' % server_id).status_code == 404, 120)
    return args.moves


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--servers', type=int, default=1)
    parser.add_argument('--moves', type=int, default=20)
    parser.add_argument('--dwell', type=float, default=0)
    parser.add_argument('--cmdline', action='append', default=[])
    parser.add_argument('--property', action='append', default=[])
    parser.add_argument('--option', action='append', default=[],
                        help='section.key=value for the computes')
    parser.add_argument('--state', default=os.path.join(REPO, 'state', 'soak'))
    parser.add_argument('--out', default=os.path.join(REPO, 'state', 'soak', 'out'))
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    os.makedirs(args.out, exist_ok=True)
    extra = {}
    for item in args.option:
        key, value = item.split('=', 1)
        section, name = key.split('.', 1)
        extra.setdefault(section, {})[name] = value
    options = nova_hosts.compute_options

    def with_extra(cloud, host):
        conf, sections = options(cloud, host)
        for section, values in extra.items():
            sections.setdefault(section, {}).update(values)
        return conf, sections
    nova_hosts.compute_options = with_extra
    image = lvimage.GuestImage(os.path.join(REPO, 'state', 'libvirt', 'image'), log=log).build()
    nova = nova_hosts.NovaLibvirtCloud(args.state, log=log, prefix='drslvc',
                                       subnet='10.79.0', name='nova_drs_lvc')
    survived = []
    try:
        nova.up(image)
        image_id = register(nova, args)
        for number in range(1, args.servers + 1):
            survived.append(soak_one(nova, image_id, args, number))
            if survived[-1] < args.moves:
                break
    finally:
        nova.down()
    log('survived %s of %d moves each' % (survived, args.moves))
    return 0 if all(s == args.moves for s in survived) else 1


if __name__ == '__main__':
    sys.exit(main())
