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

"""nova's real libvirt driver on the libvirt hosts, with the mini-cloud's control plane.

Issue 30's second layer: the libvirt hosts of hosts.py, the mini-cloud of
tests/integration/cloud.py started with *no* trace-driver computes (its own
databases ``nova_drs_lv_*``, RabbitMQ vhost and state dir, so that it runs
beside the integration tier's cloud), then one nova-compute per libvirt
host running ``libvirt.LibvirtDriver`` (``virt_type = qemu``: TCG) from the
cloud's venv (``libvirt-python`` is pip-installed there when missing; it
builds against ``libvirt-dev``).

Each nova-compute runs in the root network namespace (RabbitMQ and MariaDB
are on 127.0.0.1) but in its host's *mount* namespace (``nsenter --mount``
on that host's libvirtd): there ``/run/libvirt`` is its host's socket
(``qemu:///system``) and ``/var/lib/libvirt/nova`` its host's own state and
instances dir. Both computes thus have the same ``instances_path`` naming
different files, as on real hosts without shared storage: nova's block
migration needs that, since it keeps the disk paths of the domain XML and
finds no shared storage (its test file is not seen by the other host).
From this process, ``Host.path('/var/lib/libvirt/nova/...')`` reads them.

Migration goes peer-to-peer from the source libvirtd to
``qemu+tcp://<destination's live_migration_inbound_addr>/system``
(``live_migration_scheme = tcp``). ``cpu_mode = custom`` with ``qemu64``
and ``[workarounds] libvirt_disable_apic`` as in nova's own TCG gate; the
privsep helper is the venv's ``privsep-helper`` run directly (root, no
sudo or rootwrap). ``[workarounds] disable_deep_image_inspection``: the
destination's pre_live_migration fetches the kernel (aki) through nova's
format inspector, which takes the bzImage's legacy boot sector for an MBR
and refuses the image ("Safety checks failed: mbr"); the boot's own fetch
does not inspect it. nova-drs's wake_address plugin logs one ERROR per
compute: ``my_ip`` (the host's 10.77.0.N) is on no interface of the root
network namespace, so no Wake-on-LAN address (nothing here needs one).

The guest (image.py) is registered in glance UEC-style, as nova's gate does
with CirrOS: kernel (aki), ramdisk (ari) and a 1 MiB machine image (ami)
whose ``kernel_id``/``ramdisk_id`` name them and whose ``os_command_line``
is the kernel command line nova gives the guest (``drs_burn=N`` in it).

``NovaLibvirtCloud.down`` stops every process it started by PID (the cloud's
pid files hold the computes too), removes the namespaces, then drops the
``nova_drs_lv_*`` databases and the vhost; ``up`` starts with it, so a
killed run is cleaned by the next.
"""

import os
import re
import shutil
import subprocess
import time

import pymysql

from tests.integration import cloud as minicloud
from tests.libvirt import hosts as lvhosts

NAME = 'nova_drs_lv'
NOVA_DIR = '/var/lib/libvirt/nova'  # as each host (and its nova-compute) sees it
#: The guest's default burn (percent of its one vCPU).
BURN = 40


def command_line(burn=BURN):
    """The kernel command line of a guest burning ``burn`` % (image.py reads it)."""
    return 'console=ttyS0 quiet drs_burn=%d' % burn


#: What a guest kernel in trouble prints on its console.
OOPS = re.compile(r'Oops|BUG:|Call Trace|Kernel panic|general protection fault')


def alive(text):
    """The guest's ``alive N`` counters in ``text`` (its console), in order."""
    return [int(n) for n in re.findall(r'^alive (\d+)\s*$', text, re.M)]


MICROVERSION = '2.74'


class NovaHostsError(Exception):
    """The nova layer could not be set up; the message says what and where."""


def ensure_libvirt_python(log=print):
    """``pip install libvirt-python`` into the cloud venv unless it imports there.

    The venv is built first when missing (a clean clone): the control plane's
    own start would build it only after this step.
    """
    minicloud.ensure_venv(log)
    python = os.path.join(minicloud.BIN, 'python')
    if subprocess.run([python, '-c', 'import libvirt'], capture_output=True).returncode == 0:
        return
    log('nova hosts: pip install libvirt-python into %s' % minicloud.VENV)
    proc = subprocess.run([python, '-m', 'pip', 'install', '-q', 'libvirt-python'],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise NovaHostsError('pip install libvirt-python failed (libvirt-dev and gcc '
                             'needed): %s' % proc.stderr.strip()[-300:])


def compute_options(cloud, host):
    """compute.conf of ``host``'s nova-compute (read after the cloud's nova.conf)."""
    conf = cloud.compute_conf(host.name)
    privsep = '%s --config-file %s --config-file %s' % (
        os.path.join(minicloud.BIN, 'privsep-helper'), cloud.nova_conf, conf)
    return conf, {
        'DEFAULT': {'host': host.name, 'compute_driver': 'libvirt.LibvirtDriver',
                    'state_path': NOVA_DIR, 'instances_path': NOVA_DIR + '/instances',
                    'my_ip': host.address},
        'libvirt': {'virt_type': 'qemu', 'connection_uri': 'qemu:///system',
                    'cpu_mode': 'custom', 'cpu_models': 'qemu64',
                    'live_migration_inbound_addr': host.address,
                    'live_migration_scheme': 'tcp'},
        # disable_deep_image_inspection: the destination fetches the kernel
        # (aki) again in pre_live_migration through nova's format inspector,
        # which takes a bzImage's legacy boot sector for an MBR and refuses
        # it ("Safety checks failed: mbr"); the boot's fetch does not inspect.
        'workarounds': {'libvirt_disable_apic': 'true',
                        'disable_deep_image_inspection': 'true'},
        'nova_sys_admin': {'helper_command': privsep},
        'oslo_concurrency': {'lock_path': NOVA_DIR + '/locks'},
    }


class NovaLibvirtCloud:
    """Libvirt hosts + mini-cloud control plane + one libvirt nova-compute per host."""

    def __init__(self, state, count=2, log=print, prefix='drslv', subnet='10.77.0',
                 name=NAME):
        # prefix, subnet and name: a second clone (a soak loop) runs its own
        # namespaces, addresses, databases and vhost beside ``make libvirt``.
        self.log = log
        self.name = name
        self.lv = lvhosts.LibvirtHosts(count=count, state_root=os.path.join(state, 'hosts'),
                                       prefix=prefix, subnet=subnet, log=log)
        self.hosts = self.lv.hosts
        self.cloud = minicloud.Cloud(os.path.join(state, 'minicloud'), log=log, name=name,
                                     computes=())
        self.images = {}
        self.timings = {}

    def up(self, image):
        """Everything, in order; on failure everything started is stopped again."""
        self.down()
        started = time.monotonic()
        try:
            ensure_libvirt_python(self.log)
            self.lv.up()
            self.timings['hosts'] = time.monotonic() - started
            self.cloud.up()
            self.timings['control plane'] = self.cloud.timings[-1][1]
            computes = time.monotonic()
            for host in self.hosts:
                self.start_compute(host)
            self._wait_computes(timeout=240)
            self.timings['computes'] = time.monotonic() - computes
            self.register_guest(image)
        except BaseException:
            self.down()
            raise
        self.log('nova hosts: up in %.1f s (%s)' % (
            time.monotonic() - started,
            ', '.join('%s %.1f s' % item for item in self.timings.items())))
        return self

    def start_compute(self, host):
        """nova-compute for ``host``: root network namespace, the host's mount namespace."""
        conf, options = compute_options(self.cloud, host)
        minicloud._write_ini(conf, options)
        os.makedirs(host.path(NOVA_DIR + '/instances'), exist_ok=True)
        cmd = ['nsenter', '--mount=/proc/%d/ns/mnt' % host.pid, '--'] + \
            self.cloud._nova_cmd('nova-compute', conf)
        return self.cloud._spawn('nova-compute-' + host.name, cmd)

    def _wait_computes(self, timeout):
        """Until nova lists every host's hypervisor and has mapped it into cell1."""
        compute = self.cloud.client('compute', raise_exc=False)
        manage = self.cloud._nova_cmd('nova-manage', self.cloud.nova_db_conf)
        log = os.path.join(self.cloud.logs, 'manage.log')
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for host in self.hosts:
                if 'nova-compute-' + host.name in self.cloud.failed():
                    raise NovaHostsError('nova-compute-%s exited; see %s' % (
                        host.name, self.cloud._log('nova-compute-' + host.name)))
            minicloud._run(manage + ['cell_v2', 'discover_hosts'], 'discover_hosts',
                           log_path=log)
            mapped = minicloud._run(manage + ['cell_v2', 'list_hosts'], 'list_hosts')
            listed = compute.get('/os-hypervisors')
            names = {h['hypervisor_hostname'] for h in listed.json()['hypervisors']} \
                if listed.ok else set()
            if all(h.name in names and ' %s ' % h.name in mapped for h in self.hosts):
                return
            time.sleep(3)
        raise NovaHostsError('the libvirt hypervisors did not show up within %d s; see %s'
                             % (timeout, self.cloud.logs))

    def register_guest(self, image):
        """aki + ari (UEC-style) and the ami of the default burn; amis of
        other burns are registered on first use (``machine``)."""
        for kind, path in (('aki', image.kernel), ('ari', image.initrd)):
            with open(path, 'rb') as handle:
                self.images[kind] = self._upload(
                    {'name': 'drs-guest-' + kind, 'disk_format': kind,
                     'container_format': kind, 'visibility': 'public'}, handle.read())
        self.machine(BURN)

    def machine(self, burn):
        """The id of the ami whose guest burns ``burn`` % of its vCPU."""
        key = 'ami-%d' % burn
        if key not in self.images:
            self.images[key] = self.register_machine(
                'drs-guest-' + key, command_line(burn))
        return self.images[key]

    def register_machine(self, name, kernel_args, **properties):
        """An ami booting the registered kernel and ramdisk with ``kernel_args``
        (and image ``properties``); its id."""
        body = {'name': name, 'disk_format': 'ami', 'container_format': 'ami',
                'visibility': 'public', 'kernel_id': self.images['aki'],
                'ramdisk_id': self.images['ari'], 'os_command_line': kernel_args}
        body.update(properties)
        return self._upload(body, b'\0' * (1024 * 1024))

    def _upload(self, body, data):
        glance = self.cloud.client('image', raise_exc=True)
        created = glance.post('/v2/images', json=body).json()
        glance.put('/v2/images/%s/file' % created['id'], data=data,
                   headers={'Content-Type': 'application/octet-stream'})
        return created['id']

    def compute(self):
        """nova's API as the admin, at the microversion the tests speak."""
        return self.cloud.client('compute', raise_exc=False,
                                 default_microversion=MICROVERSION)

    def down(self):
        """Processes by PID (computes first), namespaces, databases and vhost."""
        self.cloud.down()
        self.lv.down()
        drop_databases(self.name + '_', self.log)
        ctl = shutil.which('rabbitmqctl')
        if ctl and self.name in subprocess.run([ctl, '-q', 'list_vhosts'],
                                               capture_output=True, text=True).stdout.split():
            subprocess.run([ctl, '-q', 'delete_vhost', self.name], capture_output=True)


def drop_databases(prefix, log=print):
    """DROP every MariaDB database named ``prefix*`` (this layer's only)."""
    try:
        connection = pymysql.connect(host=minicloud.DB['host'], port=minicloud.DB['port'],
                                     user=minicloud.DB['user'],
                                     password=minicloud.DB['password'])
    except pymysql.MySQLError as exc:
        log('nova hosts: cannot reach MariaDB to drop %s*: %s' % (prefix, exc))
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute('SHOW DATABASES')
            for (name,) in cursor.fetchall():
                if name.startswith(prefix):
                    cursor.execute('DROP DATABASE `%s`' % name)
    finally:
        connection.close()
