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

"""instance_stats: per-instance CPU %, memory and disk I/O rate from the virt driver."""

import time

from nova import exception as nova_exception
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs.resources import base
from nova_drs.resources import counters

LOG = logging.getLogger(__name__)


def _field(obj, name):
    """A nova object's field, None when the driver did not set it."""
    return getattr(obj, name) if obj.obj_attr_is_set(name) else None


class InstanceStats(base.ComputeResourcePlugin):
    """Samples every instance on the node with ``get_instance_diagnostics``.

    CPU time is the sum over the instance's vCPUs (libvirt domain stats in
    production); CPU % is its increase over the period divided by the
    period and the vCPU count (see ``counters.cpu_percent`` for wrap-around,
    restarts and resizes). Memory is what the driver reports in use, else
    the flavor's memory. Disk I/O is read plus write requests of all disks,
    reported as a rate.

    Instances the driver cannot describe yet or any more are left out of
    the period, quietly: one nova has not launched (building: libvirt
    computes the diagnostics' uptime from ``launched_at`` and fails without
    it), and one whose domain left between nova's listing and the sample
    (a live migration completing: ``InstanceNotFound``). Both happen every
    day on a busy host; an ERROR each time would hide the real ones.
    """

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._driver = None
        self._previous = {}
        self._samples = []

    def reset(self, resources, driver):
        self._driver = driver
        self._samples = []

    def remove_instance(self, usage):
        self._previous.pop(usage.uuid, None)

    def add_instance(self, usage):
        if _field(usage.instance, 'launched_at') is None:
            LOG.debug('instance_stats: %s not launched yet, not sampled', usage.uuid)
            return
        now = self._clock()
        try:
            diagnostics = self._driver.get_instance_diagnostics(usage.instance)
        except nova_exception.InstanceNotFound:
            LOG.debug('instance_stats: %s left this host, not sampled', usage.uuid)
            self._previous.pop(usage.uuid, None)
            return
        cpu_time = sum(_field(cpu, 'time') or 0 for cpu in diagnostics.cpu_details)
        requests = sum((_field(disk, 'read_requests') or 0) +
                       (_field(disk, 'write_requests') or 0)
                       for disk in diagnostics.disk_details)
        memory = _field(diagnostics, 'memory_details')
        used_mb = (memory and _field(memory, 'used')) or usage.memory_mb
        previous = self._previous.get(usage.uuid)
        sample = {'instance_uuid': usage.uuid, 'vcpus': usage.vcpus,
                  'cpu_time': cpu_time, 'mem': used_mb, 'block_dev_iops': requests,
                  'cpu_used_percent': None, 'iops': None,
                  'prev_cpu_time': None, 'prev_block_dev_iops': None,
                  'prev_updated_at': None}
        if previous:
            elapsed = now - previous['clock']
            sample.update(
                cpu_used_percent=counters.cpu_percent(
                    previous['cpu_time'], cpu_time, elapsed, usage.vcpus, previous['vcpus']),
                iops=counters.rate(previous['requests'], requests, elapsed),
                prev_cpu_time=previous['cpu_time'],
                prev_block_dev_iops=previous['requests'],
                prev_updated_at=previous['at'])
        at = timeutils.utcnow().isoformat()
        self._previous[usage.uuid] = {'clock': now, 'cpu_time': cpu_time, 'at': at,
                                      'vcpus': usage.vcpus, 'requests': requests}
        self._samples.append(sample)

    def report(self):
        return {'instances': self._samples}
