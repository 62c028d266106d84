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

"""CloudStack's scale allocation logic, pure functions (no nova, no database).

1. the server's current host has capacity for the new flavor -> ``in_place``;
2. else hosts of the same cluster aggregate that have it -> ``move`` there;
3. else ``refuse`` with "no capacity in cluster X", nothing changed.

Capacity is the per-aggregate overcommit accounting of
``nova_drs.overcommit.accounting``. CloudStack reserves only the delta on the
current host; nova's resize to the same host holds the old flavor (migration
consumer) *and* the new one (instance consumer) in placement until the
resize is confirmed, so the current host needs the whole new flavor free,
like any other destination. Checking the delta would promise resizes that
placement then refuses.
"""

import dataclasses

from nova_drs.overcommit import accounting

IN_PLACE = 'in_place'
MOVE = 'move'
REFUSE = 'refuse'


@dataclasses.dataclass(frozen=True)
class Flavor:
    vcpus: int
    memory_mb: int
    name: str = ''


@dataclasses.dataclass(frozen=True)
class HostCapacity:
    """One host under its aggregate's accounting (``accounting.Capacity`` each)."""

    host: str
    cpu: accounting.Capacity
    ram: accounting.Capacity

    def fits(self, flavor):
        return self.cpu.fits(flavor.vcpus) and self.ram.fits(flavor.memory_mb)


@dataclasses.dataclass(frozen=True)
class Decision:
    kind: str
    hosts: tuple = ()
    reason: str = ''


def request_problem(old, new, allow_scale_down):
    """Why scaling from ``old`` to ``new`` is refused, or None when it is allowed."""
    if (old.vcpus, old.memory_mb) == (new.vcpus, new.memory_mb):
        return 'flavor %s has the same vCPUs and RAM as the current one' % new.name
    if (new.vcpus < old.vcpus or new.memory_mb < old.memory_mb) and not allow_scale_down:
        return ('flavor %s has fewer vCPUs or less RAM than the current one and '
                '[drs_scale] allow_scale_down is false' % new.name)
    return None


def decide(server_host, cluster_name, cluster_hosts, new_flavor):
    """Where to resize: ``cluster_hosts`` are the cluster's ``HostCapacity``.

    Move candidates are ordered by most free RAM then vCPUs (worst fit spreads
    the grown servers); nova's scheduler makes the final pick among them.
    """
    by_name = {capacity.host: capacity for capacity in cluster_hosts}
    current = by_name.get(server_host)
    if current is not None and current.fits(new_flavor):
        return Decision(IN_PLACE, (server_host,))
    others = sorted((c for c in cluster_hosts if c.host != server_host and c.fits(new_flavor)),
                    key=lambda c: (-c.ram.free, -c.cpu.free, c.host))
    if others:
        return Decision(MOVE, tuple(c.host for c in others))
    return Decision(REFUSE, reason='no capacity in cluster %s for flavor %s (%d vCPUs, '
                                   '%d MB)' % (cluster_name, new_flavor.name,
                                               new_flavor.vcpus, new_flavor.memory_mb))


def host_capacity(host, cpu_inventory, ram_inventory, cpu_ratio, ram_ratio, recorded):
    """``HostCapacity`` from placement figures and the aggregate's ratios.

    ``*_inventory`` are ``(physical, nominal used, placement's own ratio)``;
    a ratio of None (no valid aggregate value) falls back to placement's.
    ``recorded`` is ``db.overcommit.usage_by_host()[host]`` or {}.
    """
    cpu = accounting.capacity(cpu_inventory[0], cpu_ratio or cpu_inventory[2],
                              cpu_inventory[1], recorded.get('vcpus'))
    ram = accounting.capacity(ram_inventory[0], ram_ratio or ram_inventory[2],
                              ram_inventory[1], recorded.get('memory_mb'))
    return HostCapacity(host, cpu, ram)
