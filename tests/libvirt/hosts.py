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

"""Several real libvirt hosts on one machine, for the libvirt test tier.

nova-drs moves guests between hypervisors; this tier proves that the moves it
asks for really happen, with libvirt 9 and QEMU 7 from Debian and no nova.
One machine plays N hosts. Each host is one ``libvirtd`` started by hand in

* its own network namespace (``<prefix>-hN``), joined to the others through
  a bridge in a switch namespace (``<prefix>-sw``), with the address
  ``<subnet>.N/24`` that exists only inside these namespaces: nothing is
  added to the machine's own network;
* its own mount namespace, where the state dir's ``etc``, ``run``, ``lib``,
  ``log`` and ``cache`` are bind-mounted over ``/etc/libvirt``,
  ``/run/libvirt``, ``/var/lib/libvirt``, ``/var/log/libvirt`` and
  ``/var/cache/libvirt``: two hosts never share a socket, a domain file, a
  disk or a log, and a guest's disk path names a different file on each host,
  as on real hosts without shared storage;
* its own UTS namespace (hostname ``<prefix>-hN``) and ``host_uuid``: libvirt
  refuses to migrate a guest to "the same host", which it tells by these;
* its own cgroup (``<prefix>-hN`` under this process's cgroup in every
  controller) and cgroup namespace, with the cgroup file systems mounted anew
  inside it: libvirt names a guest's cgroup ``machine/qemu-ID-NAME``, and the
  guest being migrated has id 1 on both hosts at once.

Remote access is ``qemu+tcp://<subnet>.N/system`` with ``auth_tcp="none"``;
clients run inside a host's network namespace (``Host.run``). Nothing here
installs anything (``tools/ensure-libvirt.sh`` does): ``LibvirtHosts.check``
names in one line what is missing. ``LibvirtHosts.down`` kills every process
of every namespace by PID, deletes the namespaces (their veths and bridge go
with them) and removes the cgroups; the mounts live in mount namespaces that
end with their last process. It runs after a failed ``up`` too, and ``up``
starts with it, so a run killed half-way is cleaned by the next one.

Nothing libvirt needs was refused on the Firecracker VM this was written on
(cgroup v1 with a cgroup2 ``unified`` beside it). libvirtd logs one harmless
error there: ``dmidecode`` finds no /dev/mem, so ``virsh sysinfo`` has no
SMBIOS data. ``virsh -c qemu+tcp://...`` is used rather than libvirt-python,
which the tier does not need.
"""

import os
import shlex
import shutil
import signal
import subprocess
import time
import uuid

REQUIRED_COMMANDS = ('libvirtd', 'virsh', 'qemu-system-x86_64', 'qemu-img', 'qemu-io',
                     'ip', 'unshare', 'mount', 'busybox', 'dpkg-deb', 'apt-get')
BIND_DIRS = (('etc', '/etc/libvirt'), ('run', '/run/libvirt'), ('lib', '/var/lib/libvirt'),
             ('log', '/var/log/libvirt'), ('cache', '/var/cache/libvirt'))
CGROUP_ROOT = '/sys/fs/cgroup'


class HostsError(Exception):
    """A host could not be set up; the message says what and why in one line."""


def missing_prerequisites():
    """One line naming what this machine lacks for the tier, or None.

    The tier must fail with the reason rather than with a libvirtd traceback,
    and must not install anything behind the caller's back.
    """
    missing = [cmd for cmd in REQUIRED_COMMANDS if shutil.which(cmd) is None]
    problems = []
    if missing:
        problems.append('missing commands: ' + ', '.join(missing))
    if os.geteuid() != 0:
        problems.append('not root (namespaces and bind mounts need root)')
    if not os.path.isdir('/etc/libvirt'):
        problems.append('no /etc/libvirt')
    if not problems:
        return None
    return 'libvirt hosts: %s; run tools/ensure-libvirt.sh as root' % '; '.join(problems)


def _cgroup_mounts():
    """(mount point, fs type, options) of each cgroup hierarchy under /sys/fs/cgroup."""
    mounts = []
    with open('/proc/self/mounts') as handle:
        for line in handle:
            _dev, point, fstype, opts = line.split()[:4]
            if fstype in ('cgroup', 'cgroup2') and point.startswith(CGROUP_ROOT + '/'):
                keep = [o for o in opts.split(',') if o not in ('rw', 'relatime', 'ro')]
                mounts.append((point, fstype, ','.join(keep)))
    return mounts


def _own_cgroup_dir(point, fstype):
    """This process's cgroup directory in the hierarchy mounted at ``point``."""
    name = os.path.basename(point)
    with open('/proc/self/cgroup') as handle:
        for line in handle:
            _num, controllers, path = line.rstrip('\n').split(':', 2)
            ctl = controllers.split(',')
            if (fstype == 'cgroup2' and controllers == '') or name in ctl or (
                    'name=' + name) in ctl:
                return os.path.join(point, path.lstrip('/'))
    return point


class Host:
    """One libvirt host: its namespace, address, state dir and libvirtd."""

    def __init__(self, prefix, index, subnet, state_root):
        self.index = index
        self.name = '%s-h%d' % (prefix, index)
        self.address = '%s.%d' % (subnet, index)
        self.uri = 'qemu+tcp://%s/system' % self.address
        self.state_dir = os.path.join(state_root, 'h%d' % index)
        self.uuid = str(uuid.uuid5(uuid.NAMESPACE_DNS, self.name))
        self.pid = None

    def path(self, inside):
        """The file the host sees at ``inside`` (e.g. /var/lib/libvirt/x), seen from here."""
        for sub, target in BIND_DIRS:
            if inside == target or inside.startswith(target + '/'):
                return os.path.join(self.state_dir, sub, os.path.relpath(inside, target))
        return inside

    def run(self, *argv, timeout=120, check=True):
        """Run a command inside this host's network namespace (where the addresses are)."""
        proc = subprocess.run(['ip', 'netns', 'exec', self.name] + list(argv),
                              capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise HostsError('%s: %s failed (rc %d): %s' % (
                self.name, ' '.join(argv), proc.returncode,
                ' '.join((proc.stderr or proc.stdout).strip().splitlines()[-1:])))
        return proc

    def virsh(self, *args, uri=None, timeout=120, check=True):
        """``virsh -c URI ARGS`` over TCP from this host's namespace (default: itself)."""
        return self.run('virsh', '-q', '-c', uri or self.uri, *args,
                        timeout=timeout, check=check)


class LibvirtHosts:
    """N hosts in namespaces, brought up by ``up`` and removed by ``down``."""

    def __init__(self, count=2, state_root='state/libvirt/hosts', prefix='drslv',
                 subnet='10.77.0', log=print):
        self.prefix = prefix
        self.switch = prefix + '-sw'
        self.state_root = os.path.abspath(state_root)
        self.caps_seed = os.path.join(self.state_root, 'qemu-capabilities')
        self.hosts = [Host(prefix, i, subnet, self.state_root) for i in range(1, count + 1)]
        self.log = log
        self._popen = []

    def __enter__(self):
        self.up()
        return self

    def __exit__(self, *exc):
        self.down()

    def check(self):
        """Raise HostsError with one line when a prerequisite is missing."""
        problem = missing_prerequisites()
        if problem:
            raise HostsError(problem)

    def up(self, timeout=90):
        """Create the network, configure and start every libvirtd, wait for TCP."""
        self.check()
        self.down()
        started = time.monotonic()
        try:
            self._network()
            for host in self.hosts:
                self._configure(host)
                self._start(host)
            for host in self.hosts:
                self._wait(host, started + timeout)
        except BaseException:
            self.down()
            raise
        self._keep_capabilities()
        self.log('libvirt hosts: %d up in %.1f s (%s)' % (
            len(self.hosts), time.monotonic() - started,
            ', '.join(h.address for h in self.hosts)))

    def stop(self, host):
        """Every process of ``host``'s network namespace gone (libvirtd and any
        guest), as when a machine loses power; its namespace, addresses, state
        dir and host_uuid stay for ``start``."""
        self._kill_namespace(host.name)
        for proc in [p for p in self._popen if p.pid == host.pid]:
            proc.wait(timeout=10)
            self._popen.remove(proc)
        host.pid = None

    def start(self, host, timeout=90):
        """``host``'s libvirtd again, in fresh mount, UTS and cgroup namespaces
        over the same state dir (what a powered-on machine boots into)."""
        self._start(host)
        self._wait(host, time.monotonic() + timeout)

    def _keep_capabilities(self):
        """Keep host1's QEMU capabilities cache to seed the next run's hosts.

        Each libvirtd probes every QEMU binary at start (about 15 s for two
        hosts on two cores); libvirt checks a cached probe itself (QEMU's and
        libvirtd's ctime, kernel, microcode) and probes again when it is stale.
        """
        cache = self.hosts[0].path('/var/cache/libvirt/qemu/capabilities')
        if not os.path.isdir(self.caps_seed) and os.path.isdir(cache):
            shutil.copytree(cache, self.caps_seed + '.tmp')
            os.replace(self.caps_seed + '.tmp', self.caps_seed)

    def _ip(self, *args):
        proc = subprocess.run(['ip'] + list(args), capture_output=True, text=True)
        if proc.returncode != 0:
            raise HostsError('ip %s: %s' % (' '.join(args), proc.stderr.strip()))

    def _network(self):
        """A bridge in the switch namespace, one veth from it into each host namespace."""
        self._ip('netns', 'add', self.switch)
        self._ip('-n', self.switch, 'link', 'add', 'br0', 'type', 'bridge')
        self._ip('-n', self.switch, 'link', 'set', 'br0', 'up')
        for host in self.hosts:
            port = 'p%d' % host.index
            self._ip('netns', 'add', host.name)
            self._ip('-n', self.switch, 'link', 'add', port, 'type', 'veth',
                     'peer', 'name', 'eth0', 'netns', host.name)
            self._ip('-n', self.switch, 'link', 'set', port, 'master', 'br0', 'up')
            self._ip('-n', host.name, 'addr', 'add', host.address + '/24', 'dev', 'eth0')
            self._ip('-n', host.name, 'link', 'set', 'eth0', 'up')
            self._ip('-n', host.name, 'link', 'set', 'lo', 'up')

    def _configure(self, host):
        """Fresh state dirs; /etc/libvirt copied, with this host's two config files."""
        shutil.rmtree(host.state_dir, ignore_errors=True)
        shutil.copytree('/etc/libvirt', host.path('/etc/libvirt'), symlinks=True)
        for sub, _target in BIND_DIRS[1:]:
            os.makedirs(os.path.join(host.state_dir, sub), exist_ok=True)
        os.makedirs(host.path('/var/lib/libvirt/images'), exist_ok=True)
        if os.path.isdir(self.caps_seed):
            shutil.copytree(self.caps_seed, host.path('/var/cache/libvirt/qemu/capabilities'))
        with open(host.path('/etc/libvirt/libvirtd.conf'), 'w') as handle:
            handle.write(
                'listen_tls = 0\nlisten_tcp = 1\nauth_tcp = "none"\n'
                'listen_addr = "%s"\nunix_sock_dir = "/run/libvirt"\nhost_uuid = "%s"\n'
                'log_outputs = "3:file:/var/log/libvirt/libvirtd.log"\n'
                % (host.address, host.uuid))
        # security_driver none: no AppArmor/SELinux in a namespace; user root and
        # no dynamic ownership: the kernel, initrd and disks stay as they are;
        # stdio_handler file: no virtlogd; namespaces []: no private /dev per guest;
        # migration_host: the destination tells the source where to send the
        # memory and NBD streams, by default its hostname, which nothing resolves.
        with open(host.path('/etc/libvirt/qemu.conf'), 'w') as handle:
            handle.write(
                'security_driver = "none"\nstdio_handler = "file"\nnamespaces = [ ]\n'
                'user = "root"\ngroup = "root"\ndynamic_ownership = 0\nremember_owner = 0\n'
                'migration_address = "%s"\nmigration_host = "%s"\n'
                % (host.address, host.address))

    def _cgroup_script(self, host):
        """Shell lines: join this host's cgroups (before unshare -C), remount inside."""
        join, remount = [], ['mount -t tmpfs cgroup_root %s' % CGROUP_ROOT]
        for point, fstype, opts in _cgroup_mounts():
            own = os.path.join(_own_cgroup_dir(point, fstype), host.name)
            os.makedirs(own, exist_ok=True)
            if os.path.basename(point) == 'cpuset':
                for knob in ('cpuset.cpus', 'cpuset.mems'):
                    with open(os.path.join(os.path.dirname(own), knob)) as handle:
                        value = handle.read().strip()
                    with open(os.path.join(own, knob), 'w') as handle:
                        handle.write(value)
            join.append('echo $$ > %s' % shlex.quote(os.path.join(own, 'cgroup.procs')))
            remount.append('mkdir -p %s && mount -t %s %s %s %s' % (
                point, fstype, '-o ' + opts if opts else '', fstype, point))
        return join, remount

    def _start(self, host):
        """libvirtd in its namespaces; the Popen PID is libvirtd's (every step execs).

        The cgroups are joined before ``ip netns exec``, which mounts a fresh
        /sys without them, and before ``unshare -C``, whose namespace is rooted
        at the cgroup it starts in.
        """
        join, remount = self._cgroup_script(host)
        binds = ['mkdir -p %s && mount --bind %s %s' % (
            target, shlex.quote(os.path.join(host.state_dir, sub)), target)
                 for sub, target in BIND_DIRS]
        inner = ' && '.join(binds + ['hostname %s' % host.name] + remount + [
            'exec libvirtd --listen --pid-file /run/libvirt/libvirtd.pid'])
        outer = ' && '.join(join + [
            'exec ip netns exec %s unshare -m -u -C --propagation private sh -c "$0"'
            % host.name])
        with open(os.path.join(host.state_dir, 'libvirtd.out'), 'wb') as out:
            proc = subprocess.Popen(['sh', '-c', outer, inner],
                                    stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        host.pid = proc.pid
        self._popen.append(proc)

    def _wait(self, host, deadline):
        """Until ``virsh version`` answers over TCP; the libvirtd log on failure."""
        while time.monotonic() < deadline:
            if host.virsh('version', check=False, timeout=30).returncode == 0:
                return
            proc = next(p for p in self._popen if p.pid == host.pid)
            if proc.poll() is not None:
                break
            time.sleep(0.5)
        tail = ''
        for log in ('libvirtd.out', 'log/libvirtd.log'):
            try:
                with open(os.path.join(host.state_dir, log)) as handle:
                    tail += ' | '.join(handle.read().strip().splitlines()[-3:])
            except OSError:
                pass
        raise HostsError('%s: libvirtd did not answer on %s: %s' % (host.name, host.uri, tail))

    def _namespaces(self):
        proc = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True)
        names = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
        return [n for n in names if n.startswith(self.prefix + '-')]

    def down(self):
        """Kill every process in our namespaces by PID, delete them, remove cgroups.

        It goes by the namespaces' prefix, not by this object's hosts, so it also
        removes what an earlier run killed half-way left, with however many hosts.
        """
        names = self._namespaces()
        for name in names:
            self._kill_namespace(name)
            subprocess.run(['ip', 'netns', 'del', name], capture_output=True)
        for proc in self._popen:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._popen = []
        for host in self.hosts:
            host.pid = None
        for name in set(names) | {host.name for host in self.hosts}:
            self._remove_cgroups(name)

    def _kill_namespace(self, name, grace=10):
        """SIGTERM, then SIGKILL, each PID ``ip netns pids`` names (qemu is not our child)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                proc = subprocess.run(['ip', 'netns', 'pids', name],
                                      capture_output=True, text=True)
                pids = [int(p) for p in proc.stdout.split()]
                if not pids:
                    return
                for pid in pids:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
                if sig == signal.SIGKILL:
                    time.sleep(0.2)
                else:
                    time.sleep(0.5)
        raise HostsError('%s: processes %s survived SIGKILL' % (name, pids))

    def _remove_cgroups(self, name):
        """rmdir a host's cgroup trees bottom-up (libvirt's machine/ dirs included)."""
        for point, fstype, _opts in _cgroup_mounts():
            top = os.path.join(_own_cgroup_dir(point, fstype), name)
            if not os.path.isdir(top):
                continue
            for root, _dirs, _files in sorted(os.walk(top), key=lambda w: -len(w[0])):
                try:
                    os.rmdir(root)
                except OSError as exc:
                    self.log('libvirt hosts: cannot remove cgroup %s: %s' % (root, exc))
