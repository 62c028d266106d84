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

"""compute_units: the spec's cu example on the compute side."""

from nova_drs import conf as drs_conf
from nova_drs.resources import base
from nova_drs.resources import units


class ComputeUnits(base.ComputeResourcePlugin):
    """Reports ``drs_cu_total`` (host capacity) and ``drs_cu_used`` (sum of ``drs:cu``).

    Capacity is ``[drs_resources] compute_units``, or the host's vCPUs times
    ``compute_units_per_cpu`` when that is 0. Usage is recounted from the
    instances on the node every period, so it follows boots, deletes and
    migrations at the next period. ``drs_cu_instances`` lists the instances
    counted, so the scheduler can add the ones placed since.
    """

    def __init__(self, conf=drs_conf.CONF):
        self._conf = conf
        self.total = 0
        self.used = 0
        self.counted = []

    def reset(self, resources, driver):
        group = self._conf.drs_resources
        self.total = group.compute_units or resources.vcpus * group.compute_units_per_cpu
        self.used = 0
        self.counted = []

    def add_instance(self, usage):
        self.used += units.requested_cu(usage.extra_specs)
        self.counted.append(usage.uuid)

    def test(self, usage, limits):
        wanted = units.requested_cu(usage.extra_specs)
        if self.used + wanted > self.total:
            return ('instance %s needs %d cu, %d of %d cu free'
                    % (usage.uuid, wanted, self.total - self.used, self.total))
        return None

    def write(self, stats):
        stats[units.CU_TOTAL_KEY] = str(self.total)
        stats[units.CU_USED_KEY] = str(self.used)
        stats[units.CU_INSTANCES_KEY] = ','.join(sorted(self.counted))
