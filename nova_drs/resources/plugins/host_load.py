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

"""host_load: actual CPU and memory use of the hypervisor host."""

import psutil

from nova_drs.resources import base

CPU_KEY = 'drs_cpu_used_percent'
MEMORY_USED_KEY = 'drs_memory_used_mb'
MEMORY_TOTAL_KEY = 'drs_memory_total_mb'
MB = 1024 * 1024


class HostLoad(base.ComputeResourcePlugin):
    """Reports ``drs_cpu_used_percent``, ``drs_memory_used_mb``, ``drs_memory_total_mb``.

    CPU comes from the virt driver's host CPU times (nova's ``cpu.percent``)
    when the driver provides a value for the period, otherwise from psutil
    (busy time of the whole host since the previous period), clamped to
    0..100: nova's ``cpu.percent`` is a ratio of two counter deltas read a
    moment apart and can stray past 100, and the collector refuses a sample
    outside 0..100 (``stats.ingest.BOUNDS``). Memory is what the host's
    kernel reports as not available (psutil), so page cache does not count
    as used.
    """

    def __init__(self):
        self._cpu = None
        self._memory = None
        psutil.cpu_percent(interval=None)  # baseline for the first period

    def reset(self, resources, driver):
        if resources.cpu_percent is not None:
            cpu = float(resources.cpu_percent)
        else:
            cpu = psutil.cpu_percent(interval=None)
        self._cpu = min(100.0, max(0.0, cpu))
        memory = psutil.virtual_memory()
        self._memory = (int((memory.total - memory.available) / MB), int(memory.total / MB))

    def write(self, stats):
        stats[CPU_KEY] = '%.1f' % self._cpu
        stats[MEMORY_USED_KEY] = str(self._memory[0])
        stats[MEMORY_TOTAL_KEY] = str(self._memory[1])

    def report(self):
        return {'host_stats': {'cpu_used_percent': self._cpu,
                               'memory_used': self._memory[0],
                               'memory_total': self._memory[1]}}
