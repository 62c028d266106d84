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

"""TEST-ONLY virtual IPMI BMCs of the libvirt hosts: a chassis is a host's libvirtd + nova-compute.

What VirtualBMC does for one libvirt domain, one level up, for the machines
of nova_hosts.py. Power off (soft or hard) stops the host's nova-compute,
then every process of its network namespace (libvirtd and any guest left:
a machine that loses power loses what runs on it; nova-drs powers off only
hosts it emptied); the namespace, address, state dir and ``host_uuid`` stay.
Power on starts libvirtd again over the same state dir, then nova-compute
with the same ``state_path``: the same compute node and resource provider
come back, as after a real power cycle. Power state: whether libvirtd lives.

Each BMC is pyghmi's IPMI server (``tests.integration.bmc.ipmi_server``, the
mini-cloud's) on a UDP port of 127.0.0.1, served by a thread of the test process;
``nova-loadbalancer`` switches it with the shipped ``ipmi`` power driver.
"""

import os
import signal
import threading
import time

from tests.integration import bmc as minicloud_bmc
from tests.integration import cloud as minicloud

USER = minicloud.BMC_USER  # the cloud's bmc_options name these
PASSWORD = minicloud.BMC_PASSWORD


class LibvirtChassis:
    """Power of one libvirt host of a nova_hosts.NovaLibvirtCloud."""

    def __init__(self, nova, host):
        self.nova = nova
        self.host = host
        self._lock = threading.Lock()

    def muted(self):
        return False

    def is_on(self):
        return self.host.pid is not None and minicloud._pid_alive(self.host.pid)

    def power_off(self, hard=False):
        """nova-compute's process group signalled, as the mini-cloud's BMC does
        it, its pid file kept: the cloud lists it as died (``Cloud.failed``),
        which the shared invariant check expects of a host powered off."""
        with self._lock:
            pid = self.nova.cloud.running().get('nova-compute-' + self.host.name)
            if pid is not None and minicloud._pid_alive(pid):
                os.killpg(pid, signal.SIGKILL if hard else signal.SIGTERM)
                deadline = time.monotonic() + (2 if hard else 15)
                while minicloud._pid_alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.2)
                if minicloud._pid_alive(pid):
                    os.killpg(pid, signal.SIGKILL)
            self.nova.lv.stop(self.host)

    def power_on(self):
        with self._lock:
            if self.is_on():
                return
            self.nova.lv.start(self.host)
            self.nova.start_compute(self.host)


def start(nova):
    """One BMC per host of ``nova``, served by one thread until the process
    ends (pyghmi's server sessions are global to the process), entered in the
    cloud's own table of BMCs: ``nova.cloud.bmc_options(host, 'ipmi')`` gives
    the shipped driver's options towards it, and ``power_status`` (the shared
    invariant check) reads it."""
    servers = []
    for host in nova.hosts:
        port = minicloud._free_udp_port()
        servers.append(minicloud_bmc.ipmi_server(LibvirtChassis(nova, host), port,
                                                 USER, PASSWORD))
        nova.cloud.bmcs['ipmi'][host.name] = port
    threading.Thread(target=servers[0].listen, name='libvirt-bmcs', daemon=True).start()
