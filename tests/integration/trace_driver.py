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

"""TEST-ONLY virt driver of the mini-cloud: servers burn CPU from a replayed PlanetLab trace.

Never shipped: registered only in .venv-cloud (``compute_driver =
drs_trace.TraceLoadDriver``, importable through the alias that
``cloud.register_test_plugins`` installs). It is nova's
``FakeDriverWithoutFakeNodes`` (stable node identity across a power cycle)
with a host of ``VCPUS`` vCPUs and ``MEMORY_MB`` MiB, plus what the nova-drs
compute monitor reads on a real host:

* ``get_instance_diagnostics``: cumulative CPU time (ns, all vCPUs) of each
  server, the integral of its trace since its assignment;
* ``get_host_cpu_stats``: cumulative host user/idle times, user = the CPU
  time the servers on this host burnt here (so nova's ``cpu.percent`` is the
  sum of their loads over the host's vCPUs).

Load of a server: its metadata (so tests and tempest set it through the
compute API, at boot or later with a metadata update), read every period:

* ``drs_trace``: trace file in ``$NOVA_DRS_TRACE_DIR`` (PlanetLab sample by
  default); no such key: the server is idle;
* ``drs_trace_start``: first sample (default 0);
* ``drs_trace_since``: unix time the trace starts (default: server creation);
* ``drs_trace_scale``: load multiplier (default 1, capped at 100 % per vCPU).

Migration behaviour, also from its metadata (read on the source host):

* ``drs_migration_seconds``: a live migration takes this long (default: at once);
* ``drs_migration_fails``: any value: the live migration fails the way
  libvirt's does (``recover_method``: migration ``error``, server ACTIVE on
  its source).

Host size: ``$NOVA_DRS_TRACE_VCPUS`` vCPUs (default 4) for this process.

A server at wall time t runs sample ``start + (t - since) / seconds`` of its
trace (held at the last sample), ``seconds`` = ``$NOVA_DRS_TRACE_SECONDS``
(5: one 5-minute sample per 5 s, a 60x speed-up). The position depends on
wall time only, so a server keeps its place in the trace when it
live-migrates to another nova-compute process.
"""

import os
import time

from nova.objects import diagnostics as diagnostics_obj
from nova.virt import fake

from nova_drs.sim import traces as trace_files

NS = 1e9
DEFAULT_TRACE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'data', 'planetlab-sample', '20110303')


def busy_seconds(fractions, start, since, now, seconds_per_sample, scale=1.0):
    """CPU-seconds one vCPU running ``fractions`` burnt between ``since`` and ``now``."""
    if now <= since or not fractions:
        return 0.0
    total, position, end = 0.0, float(start), start + (now - since) / seconds_per_sample
    while position < end:
        index = int(position)
        step = min(end, index + 1) - position
        total += min(1.0, scale * fractions[min(index, len(fractions) - 1)]) * step
        position += step
    return total * seconds_per_sample


class _Load:
    """What one server runs, from its metadata."""

    def __init__(self, metadata, created_at):
        self.trace = metadata.get('drs_trace')
        self.start = float(metadata.get('drs_trace_start', 0))
        self.since = float(metadata.get('drs_trace_since', created_at))
        self.scale = float(metadata.get('drs_trace_scale', 1))


class _Traces:
    """Trace files, loaded once each."""

    def __init__(self):
        self.directory = os.environ.get('NOVA_DRS_TRACE_DIR', DEFAULT_TRACE_DIR)
        self.seconds = float(os.environ.get('NOVA_DRS_TRACE_SECONDS', '5'))
        self._loaded = {}

    def cpu_seconds(self, load, now):
        """CPU-seconds per vCPU a server burnt since its trace started (0: idle)."""
        if load is None or not load.trace:
            return 0.0
        if load.trace not in self._loaded:
            self._loaded[load.trace] = trace_files.load_file(
                os.path.join(self.directory, os.path.basename(load.trace)))
        return busy_seconds(self._loaded[load.trace], load.start, load.since, now,
                            self.seconds, load.scale)


class TraceLoadDriver(fake.FakeDriverWithoutFakeNodes):
    """A 4-vCPU (``$NOVA_DRS_TRACE_VCPUS``), 8 GiB host loaded as its servers' traces say."""

    memory_mb = 8192
    local_gb = 200

    def __init__(self, virtapi, read_only=False):
        # Read by FakeDriver.__init__ to size the host.
        self.vcpus = int(os.environ.get('NOVA_DRS_TRACE_VCPUS', '4'))
        super().__init__(virtapi, read_only)
        self._traces = _Traces()
        self._loads = {}             # uuid -> (_Load, vcpus), refreshed every period
        self._burnt_here = {}        # uuid -> server CPU ns at the last host reading
        self._host_user_ns = 0.0
        self._started = time.time()

    def _remember(self, instance):
        self._loads[instance.uuid] = (
            _Load(instance.metadata or {}, instance.created_at.timestamp()),
            instance.flavor.vcpus)

    def spawn(self, context, instance, image_meta, injected_files, admin_password,
              allocations, network_info=None, block_device_info=None,
              power_on=True, accel_info=None):
        super().spawn(context, instance, image_meta, injected_files, admin_password,
                      allocations, network_info, block_device_info, power_on, accel_info)
        self._remember(instance)

    def live_migration(self, context, instance, dest, post_method, recover_method,
                       block_migration=False, migrate_data=None):
        metadata = instance.metadata or {}
        time.sleep(float(metadata.get('drs_migration_seconds', 0)))
        if 'drs_migration_fails' in metadata:
            recover_method(context, instance, dest, migrate_data, migration_status='error')
            return
        super().live_migration(context, instance, dest, post_method, recover_method,
                               block_migration, migrate_data)

    def _cpu_ns(self, uuid, now):
        load, vcpus = self._loads.get(uuid, (None, 1))
        return self._traces.cpu_seconds(load, now) * vcpus * NS

    def get_instance_diagnostics(self, instance):
        self._remember(instance)
        diagnostics = diagnostics_obj.Diagnostics(
            state='running', driver='libvirt', hypervisor='kvm', hypervisor_os='linux',
            uptime=int(time.time() - self._started), config_drive=False)
        diagnostics.add_cpu(id=0, time=int(self._cpu_ns(instance.uuid, time.time())))
        diagnostics.add_disk(read_requests=0, write_requests=0)
        diagnostics.memory_details = diagnostics_obj.MemoryDiagnostics(
            maximum=instance.flavor.memory_mb, used=instance.flavor.memory_mb)
        return diagnostics

    def get_host_cpu_stats(self):
        now = time.time()
        burnt = {uuid: self._cpu_ns(uuid, now) for uuid in self.instances}
        # Only what servers burnt while on this host counts (monotonic counter).
        self._host_user_ns += sum(max(0.0, value - self._burnt_here.get(uuid, value))
                                  for uuid, value in burnt.items())
        self._burnt_here = burnt
        capacity_ns = (now - self._started) * self.vcpus * NS
        user = int(self._host_user_ns)
        return {'user': user, 'kernel': 0, 'iowait': 0,
                'idle': max(0, int(capacity_ns) - user), 'frequency': 2400}
