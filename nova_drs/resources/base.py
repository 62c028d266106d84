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

"""Plugin base classes of extensible resource tracking.

The lifecycle follows the extensible-resource-tracking spec. On nova-compute,
every resource tracker period, the ``cpu.drs`` compute monitor calls for each
:class:`ComputeResourcePlugin`::

    reset(resources, driver)         start of the period, host capacity
    remove_instance(usage)           for each instance gone since last period
    test(usage, limits)              for each instance on the node ...
    add_instance(usage)              ... then accounts it
    write(stats)                     keys for the compute node ``stats``
    report()                         fields for the statistics sample

On nova-scheduler, the ``ResourceConsumersFilter`` calls for each
:class:`SchedulerConsumerPlugin` ``update_from_compute_node(host_state, stats)``
once per host state, ``consume_from_request(host_state, spec)`` for every
instance the scheduler placed on the host in the same request, and
``host_passes(host_state, spec)`` to filter.

Every call is guarded: an exception is logged with the plugin's name and the
host keeps working.
"""

import dataclasses


@dataclasses.dataclass
class InstanceUsage:
    """What a compute resource plugin learns about one instance on the node."""

    uuid: str
    vcpus: int
    memory_mb: int
    extra_specs: dict
    instance: object = None  # the nova Instance, for plugins asking the driver


@dataclasses.dataclass
class HostResources:
    """The node a compute resource plugin works on during one period."""

    host: str
    nodename: str
    vcpus: int
    memory_mb: int
    cpu_percent: float = None  # nova's cpu.percent from the driver, if known
    compute_id: int = None


class ComputeResourcePlugin:
    """A resource tracked on nova-compute; the defaults do nothing."""

    #: Set by the loader to the name the operator configured.
    name = None

    def reset(self, resources, driver):
        """Start a period: forget per-period usage, read capacity."""

    def add_instance(self, usage):
        """Account an instance running on the node."""

    def remove_instance(self, usage):
        """Forget an instance that left the node (deleted or migrated away)."""

    def test(self, usage, limits):
        """None when ``usage`` fits next to what is accounted, else the reason."""
        return None

    def write(self, stats):
        """Put this resource's keys (string values) into the compute node stats."""

    def report(self):
        """Fields merged into the statistics sample of this period (a dict)."""
        return {}


class SchedulerConsumerPlugin:
    """Reads a resource from the compute node stats on nova-scheduler."""

    name = None

    def update_from_compute_node(self, host_state, stats):
        """Read the reported information into ``host_state.drs[self.name]``."""

    def consume_from_request(self, host_state, spec):
        """Account an instance the scheduler just placed on this host."""

    def host_passes(self, host_state, spec):
        """Whether the host has room for ``spec`` as far as this resource goes."""
        return True
