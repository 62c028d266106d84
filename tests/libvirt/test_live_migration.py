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

"""A running guest live-migrates between two real libvirt hosts, no nova yet.

This is the ground the future libvirt tier stands on: before nova-drs's
moves are tried against real hypervisors, the hypervisors must really move
a guest. The guest (image.py) burns 40 % of its vCPU and counts ``alive N``
on its serial console, which each host logs to its own file; it moves from
host1 to host2 peer-to-peer with its non-shared qcow2 disk copied
(``--copy-storage-all``). The test asserts that it runs on host2 only, that
its counter goes on there without a new boot, that the disk arrived, and
prints the migration time and the CPU the guest uses on host2, within
BURN_TOLERANCE of the burn it was asked for (the load nova-drs's balancer
would see). A second test boots guests asked for 0, 20 and 80 % and checks
the CPU time libvirt measures for each against it.

Guests run under TCG (``type='qemu'``): this machine's /dev/kvm is a
paravirtual one that hangs stock guests.
"""

import os
import re
import time

import pytest

from tests.libvirt import hosts as lvhosts
from tests.libvirt import image as lvimage

pytestmark = pytest.mark.libvirt

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STATE = os.path.join(REPO, 'state', 'libvirt')
NAME = 'drs-guest'
BURN = 40
DISK = '/var/lib/libvirt/images/%s.qcow2' % NAME
#: Each guest's serial console, as its host logs it.
CONSOLE = '/var/log/libvirt/%s-console.log'
MARKER = 'DRS-GUEST-READY burn=%d'
#: How far the CPU libvirt measures may be from the burn a guest was asked for
#: (issue 30: nova-drs's statistics within 10 percentage points).
BURN_TOLERANCE = 10

DOMAIN_XML = """<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>{kernel}</kernel>
    <initrd>{initrd}</initrd>
    <cmdline>console=ttyS0 quiet drs_burn={burn}</cmdline>
  </os>
  <cpu mode='custom' match='exact'><model fallback='allow'>qemu64</model></cpu>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='{disk}'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <serial type='file'><source path='{console}'/><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
</domain>
"""


def log(line):
    print('libvirt: ' + line, flush=True)


@pytest.fixture(scope='module')
def hosts():
    """Two libvirt hosts for the module; every process and namespace gone after."""
    cluster = lvhosts.LibvirtHosts(count=2, state_root=os.path.join(STATE, 'hosts'), log=log)
    try:
        cluster.up()
    except lvhosts.HostsError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster.hosts
    finally:
        cluster.down()


def console(host, name=NAME):
    """The guest's serial console as host logged it ('' before the file exists)."""
    try:
        with open(host.path(CONSOLE % name), errors='replace') as handle:
            return handle.read()
    except FileNotFoundError:
        return ''


def alive(text):
    """The ``alive N`` counters printed so far, in order."""
    return [int(n) for n in re.findall(r'^alive (\d+)\s*$', text, re.M)]


def wait_for(what, predicate, timeout=60):
    """Poll ``predicate`` until true; the seconds it took, or fail naming ``what``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.2)
    pytest.fail('%s: not within %d s' % (what, timeout), pytrace=False)


def cpu_time(host, name=NAME):
    """The guest's cpu.time on ``host`` in seconds (libvirt reads its cgroup)."""
    out = host.virsh('domstats', '--cpu-total', name).stdout
    return int(re.search(r'cpu\.time=(\d+)', out).group(1)) / 1e9


def boot(host, image, name=NAME, burn=BURN, disk=DISK):
    """Create a guest (transient) on ``host`` and wait for its marker."""
    image.disk_for(host.path(disk))
    xml = os.path.join(host.state_dir, name + '.xml')
    with open(xml, 'w') as handle:
        handle.write(DOMAIN_XML.format(name=name, kernel=image.kernel, initrd=image.initrd,
                                       burn=burn, disk=disk, console=CONSOLE % name))
    started = time.monotonic()
    host.virsh('create', xml)
    wait_for('marker on %s console' % host.name,
             lambda: MARKER % burn in console(host, name))
    log('guest %s booted on %s in %.1f s' % (name, host.name, time.monotonic() - started))
    wait_for('alive 2 on %s console' % host.name, lambda: 2 in alive(console(host, name)))


def measure_cpu(host, name=NAME, seconds=10):
    """Percent of one vCPU the guest used on ``host`` over ``seconds``."""
    first, started = cpu_time(host, name), time.monotonic()
    time.sleep(seconds)
    used, elapsed = cpu_time(host, name) - first, time.monotonic() - started
    return 100 * used / elapsed, elapsed


def test_live_migration_with_storage(hosts, image):
    host1, host2 = hosts[0], hosts[1]
    boot(host1, image)
    image.disk_for(host2.path(DISK), empty=True)
    try:
        started = time.monotonic()
        host1.virsh('migrate', '--live', '--p2p', '--copy-storage-all', NAME, host2.uri,
                    timeout=300)
        took = time.monotonic() - started
        log('live migration %s -> %s (p2p, copy-storage-all): %.2f s'
            % (host1.name, host2.name, took))

        assert host2.virsh('domstate', NAME).stdout.strip() == 'running'
        assert NAME not in host1.virsh('list', '--all', '--name').stdout.split()

        before = alive(console(host1))
        wait_for('alive lines on %s console' % host2.name,
                 lambda: len(alive(console(host2))) >= 2, timeout=30)
        after = alive(console(host2))
        log('console: host1 counted to %d, host2 goes on %s' % (before[-1], after[:3]))
        assert MARKER % BURN not in console(host2), 'the guest booted again on host2'
        assert after[0] >= before[-1] and after == sorted(after), (before, after)
        assert lvimage.has_pattern(host2.path(DISK)), 'the disk did not arrive on host2'

        percent, elapsed = measure_cpu(host2)
        log('guest CPU on %s over %.1f s: %.0f %% of its vCPU (burn asked: %d %%)'
            % (host2.name, elapsed, percent, BURN))
        assert abs(percent - BURN) <= BURN_TOLERANCE, (
            'the guest burns %.0f %% on host2, asked %d %%' % (percent, BURN))
    finally:
        for host in (host1, host2):
            host.virsh('destroy', NAME, check=False)


@pytest.mark.parametrize('burn', [0, 20, 80])
def test_the_guest_burns_what_it_is_asked(hosts, image, burn):
    """The load the guest's kernel command line asks for is what libvirt
    measures (its cgroup's cpu time), within BURN_TOLERANCE: the load
    nova-drs's statistics start from on a libvirt host."""
    host, name = hosts[0], 'drs-burn-%d' % burn
    boot(host, image, name=name, burn=burn,
         disk='/var/lib/libvirt/images/%s.qcow2' % name)
    try:
        percent, elapsed = measure_cpu(host, name)
        log('guest asked to burn %d %%: %.1f %% of its vCPU over %.1f s'
            % (burn, percent, elapsed))
        assert abs(percent - burn) <= BURN_TOLERANCE, (burn, percent)
    finally:
        host.virsh('destroy', name, check=False)
