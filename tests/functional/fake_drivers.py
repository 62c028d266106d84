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

"""Fake virt drivers tests select with ``compute_driver`` (nova itself untouched)."""

import time

from nova.objects import diagnostics
from nova.virt import fake


class LoadDriver(fake.FakeLiveMigrateDriver):
    """FakeLiveMigrateDriver whose instances run the load a test sets.

    ``LoadDriver.LOADS[instance_uuid] = {'cpu_percent': 50, 'memory_mb': 300,
    'iops': 20}``: from then on the instance's cumulative CPU time and disk
    requests grow at that rate (per vCPU for CPU), like libvirt counters.
    """

    LOADS = {}
    #: Host CPU busy share the driver's get_host_cpu_stats() reports.
    HOST_CPU_PERCENT = 30
    _counters = {}
    _started = time.monotonic()

    def get_host_cpu_stats(self):
        elapsed = int((time.monotonic() - self._started) * 1e9)
        busy = elapsed * self.HOST_CPU_PERCENT // 100
        return {'user': busy, 'kernel': 0, 'idle': elapsed - busy, 'iowait': 0,
                'frequency': 800}

    def get_instance_diagnostics(self, instance):
        now = time.monotonic()
        load = self.LOADS.get(instance.uuid, {})
        last, cpu_time, requests = self._counters.get(instance.uuid, (now, 0, 0))
        elapsed = now - last
        cpu_time += int(elapsed * 1e9 * instance.flavor.vcpus *
                        load.get('cpu_percent', 0) / 100.0)
        requests += int(elapsed * load.get('iops', 0))
        self._counters[instance.uuid] = (now, cpu_time, requests)
        diags = diagnostics.Diagnostics(state='running', driver='libvirt')
        for vcpu in range(instance.flavor.vcpus):
            diags.add_cpu(id=vcpu, time=cpu_time // instance.flavor.vcpus)
        diags.add_disk(read_requests=requests // 2, write_requests=requests - requests // 2)
        diags.memory_details = diagnostics.MemoryDiagnostics(
            maximum=instance.flavor.memory_mb, used=load.get('memory_mb', 0))
        return diags
