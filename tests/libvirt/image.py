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

"""The guest the libvirt tier boots, built here from Debian packages only.

No cloud image can be downloaded, and a full distribution would take a
minute to boot under TCG (this machine's /dev/kvm hangs stock guests). The
guest is a Debian cloud kernel (``linux-image-*-cloud-amd64``, fetched with
``apt-get download`` unless /boot has one) and an initramfs holding only
busybox-static and ``/init``. ``/init`` prints ``DRS-GUEST-READY burn=N`` on
the serial console, then spins ``drs_burn`` percent of every second by the
guest's clock (the percentage from the kernel command line; the spin reads
``/proc/uptime`` with shell builtins only, so the burn is what the guest is
asked for and not the cost of forking a controller) and prints ``alive N``
every two seconds:
the counter going on after a live migration proves that the same guest, not
a fresh boot, runs on the destination; the burn gives nova-drs's balancer a
load to see. A qcow2 disk (``seed.qcow2``) starts with a known pattern, so a
block migration has data to copy and a test can check the copy.

Everything goes into a cache dir and is rebuilt only when its inputs change
(``build`` is idempotent and cheap when nothing changed). The cpio archive
is written here (newc format) so no ``cpio`` command is needed.
"""

import glob
import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile

BUSYBOX = '/bin/busybox'
PATTERN = 0x5a
PATTERN_BYTES = 1024 * 1024
DISK_MB = 64

INIT = r'''#!/bin/sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev 2>/dev/null
/bin/busybox --install -s /bin
exec >/dev/console 2>&1
burn=$(sed -n 's/.*drs_burn=\([0-9]*\).*/\1/p' /proc/cmdline)
burn=${burn:-0}
[ "$burn" -gt 100 ] && burn=100
echo "DRS-GUEST-READY burn=$burn"
if [ "$burn" -gt 0 ]; then
    # Each second: spin $burn centiseconds by the guest's clock, then sleep
    # the rest. Only shell builtins inside the spin (read, test, arithmetic):
    # a fork per tick would add its own load (TCG makes forks dear).
    (
        while :; do
            read up _ </proc/uptime; start=${up%.*}${up#*.}; now=$start
            while [ $((now - start)) -lt "$burn" ]; do
                read up _ </proc/uptime; now=${up%.*}${up#*.}
            done
            rest=$((start + 100 - now))
            [ "$rest" -gt 0 ] && usleep $((rest * 10000))
        done
    ) &
fi
n=0
while :; do
    n=$((n + 1))
    echo "alive $n"
    sleep 2
done
'''


class ImageError(Exception):
    """The guest could not be built; the message says which step failed."""


def _run(argv, **kwargs):
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise ImageError('%s failed (rc %d): %s' % (
            ' '.join(argv), proc.returncode, proc.stderr.strip()[-300:]))
    return proc.stdout


def _cpio_entry(name, mode, data=b'', rdev=(0, 0), ino=1):
    """One newc cpio record (the format the kernel unpacks into its rootfs)."""
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
              len(name) + 1, 0]
    head = b'070701' + b''.join(b'%08X' % f for f in fields)
    record = head + name.encode() + b'\0'
    record += b'\0' * (-len(record) % 4)
    return record + data + b'\0' * (-len(data) % 4)


def initramfs_bytes(busybox=BUSYBOX):
    """The gzip'd cpio: dirs, /dev/console (the kernel opens it for /init), busybox, /init."""
    with open(busybox, 'rb') as handle:
        box = handle.read()
    entries = [('dev', 0o40755, b'', (0, 0)), ('proc', 0o40755, b'', (0, 0)),
               ('sys', 0o40755, b'', (0, 0)), ('bin', 0o40755, b'', (0, 0)),
               ('dev/console', 0o20600, b'', (5, 1)),
               ('bin/busybox', 0o100755, box, (0, 0)),
               ('bin/sh', 0o120777, b'busybox', (0, 0)),
               ('init', 0o100755, INIT.encode(), (0, 0))]
    archive = b''.join(_cpio_entry(name, mode, data, rdev, ino)
                       for ino, (name, mode, data, rdev) in enumerate(entries, 1))
    archive += _cpio_entry('TRAILER!!!', 0, ino=0)
    return gzip.compress(archive, mtime=0)


class GuestImage:
    """Kernel, initramfs and seed disk in ``cache_dir``; ``build`` makes what is missing."""

    def __init__(self, cache_dir='state/libvirt/image', log=print):
        self.cache_dir = os.path.abspath(cache_dir)
        self.kernel = os.path.join(self.cache_dir, 'vmlinuz')
        self.initrd = os.path.join(self.cache_dir, 'initrd.gz')
        self.seed_disk = os.path.join(self.cache_dir, 'seed.qcow2')
        self.log = log

    def build(self):
        """Make the three files; returns self. Nothing is redone when up to date."""
        os.makedirs(self.cache_dir, exist_ok=True)
        self._kernel()
        self._initrd()
        self._seed_disk()
        return self

    def _kernel(self):
        """/boot's vmlinuz when there is one, else the cloud kernel's Debian package."""
        if os.path.exists(self.kernel):
            return
        found = sorted(glob.glob('/boot/vmlinuz-*'))
        if found:
            shutil.copyfile(found[-1], self.kernel + '.tmp')
            os.replace(self.kernel + '.tmp', self.kernel)
            self.log('guest image: kernel %s' % found[-1])
            return
        package = self._kernel_package()
        with tempfile.TemporaryDirectory(dir=self.cache_dir) as tmp:
            os.chmod(tmp, 0o755)  # apt's _apt user writes the download there
            _run(['apt-get', 'download', '-q', package], cwd=tmp)
            deb = glob.glob(os.path.join(tmp, '*.deb'))[0]
            _run(['dpkg-deb', '-x', deb, os.path.join(tmp, 'root')])
            vmlinuz = glob.glob(os.path.join(tmp, 'root', 'boot', 'vmlinuz-*'))
            if not vmlinuz:
                raise ImageError('%s has no /boot/vmlinuz-*' % package)
            shutil.copyfile(vmlinuz[0], self.kernel + '.tmp')
        os.replace(self.kernel + '.tmp', self.kernel)
        self.log('guest image: kernel from %s' % package)

    @staticmethod
    def _kernel_package():
        """The versioned package linux-image-cloud-amd64 depends on (download is not recursive)."""
        out = _run(['apt-cache', 'depends', 'linux-image-cloud-amd64'])
        for line in out.splitlines():
            name = line.strip().partition(':')[2].strip()
            if line.strip().startswith('Depends:') and name.startswith('linux-image-'):
                return name
        raise ImageError('apt-cache knows no linux-image-cloud-amd64 (run apt-get update)')

    def _initrd(self):
        """Rebuilt when /init or busybox changed (their hash is stored beside it)."""
        data = initramfs_bytes()
        digest = hashlib.sha256(data).hexdigest()
        stamp = self.initrd + '.sha256'
        if os.path.exists(self.initrd) and os.path.exists(stamp):
            with open(stamp) as handle:
                if handle.read().strip() == digest:
                    return
        with open(self.initrd + '.tmp', 'wb') as handle:
            handle.write(data)
        os.replace(self.initrd + '.tmp', self.initrd)
        with open(stamp, 'w') as handle:
            handle.write(digest + '\n')
        self.log('guest image: initramfs %d KiB' % (len(data) // 1024))

    def _seed_disk(self):
        """A qcow2 whose first MiB is the pattern byte (checked after a block migration)."""
        if os.path.exists(self.seed_disk):
            return
        tmp = self.seed_disk + '.tmp'
        _run(['qemu-img', 'create', '-q', '-f', 'qcow2', tmp, '%dM' % DISK_MB])
        _run(['qemu-io', '-f', 'qcow2', '-c',
              'write -P 0x%x 0 %d' % (PATTERN, PATTERN_BYTES), tmp])
        os.replace(tmp, self.seed_disk)

    def disk_for(self, path, empty=False):
        """A guest disk at ``path``: the seed's copy, or an empty one of its size.

        The empty one is what a destination host of a block migration needs:
        libvirt copies into a disk that exists there at the same path.
        """
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if empty:
            _run(['qemu-img', 'create', '-q', '-f', 'qcow2', path, '%dM' % DISK_MB])
        else:
            shutil.copyfile(self.seed_disk, path)
        return path


def has_pattern(path):
    """True when the disk's first MiB is the seed's pattern; read-only, shared lock."""
    proc = subprocess.run(['qemu-io', '-r', '-U', '-f', 'qcow2', '-c',
                           'read -P 0x%x 0 %d' % (PATTERN, PATTERN_BYTES), path],
                          capture_output=True, text=True)
    return proc.returncode == 0 and 'Pattern verification failed' not in proc.stdout
