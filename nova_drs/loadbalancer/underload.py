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

"""Which hosts to try to empty, in order (the policy moves their instances
only if all of them find a destination)."""

import statistics

from nova_drs.loadbalancer import schema


class LeastUtilised:
    """CloudSim: every active host with 0 < utilisation < 1, least utilised
    first (utilisation as at the start of the cycle)."""

    PARAMETERS = schema.NONE

    def candidates(self, state, excluded):
        hosts = [i for i in state.active_hosts
                 if i not in excluded and 0 < state.start_utilisation[i] < 1]
        hosts.sort(key=lambda i: (state.start_utilisation[i], i))
        return hosts


@schema.algorithm
class MeanBelowThreshold:
    """Seed rule: mean CPU over the history, or RAM use, below thresholds."""

    PARAMETERS = schema.params(
        cpu=schema.fraction(0.2, 'a host is underloaded when its mean CPU is below this'),
        memory=schema.fraction(0.2, 'a host is also underloaded when its RAM use is below this'))

    def candidates(self, state, excluded):
        hosts = []
        for i in state.active_hosts:
            if i in excluded or not state.vms[i]:
                continue
            history = state.history(i)
            cpu = statistics.fmean(history) if history else state.utilisation(i)
            ram = state.used_ram[i] / state.ram_capacity[i] if state.ram_capacity[i] else 0
            if cpu < self.cpu or ram < self.memory:
                hosts.append((cpu, i))
        return [i for _cpu, i in sorted(hosts)]
