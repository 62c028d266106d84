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

"""Per-aggregate allocation ratios from aggregate metadata.

Operators set ``cpu_allocation_ratio`` / ``ram_allocation_ratio`` on host
aggregates (the keys nova's removed AggregateCoreFilter/AggregateRamFilter
used). A host in several aggregates gets the smallest valid value; invalid
values (not a number, <= 0, > MAX_ALLOCATION_RATIO) are ignored with one
warning per aggregate, key and value, and the host's own ratio applies when
no valid value is left (nova_drs.aggregate_keys declares and parses both).
"""

from nova_drs import aggregate_keys
from nova_drs.overcommit import accounting


def aggregate_ratio(aggregates, key, fallback):
    """Effective ratio ``key`` for a host in ``aggregates`` (objects with metadata)."""
    return aggregate_keys.READER.smallest(
        ((getattr(a, 'name', None) or getattr(a, 'id', '?'), getattr(a, 'metadata', None))
         for a in aggregates or ()), key, fallback)


def host_ratios(aggregates, cpu_fallback, ram_fallback):
    """(cpu ratio, ram ratio) of a host."""
    return (aggregate_ratio(aggregates, accounting.CPU_KEY, cpu_fallback),
            aggregate_ratio(aggregates, accounting.RAM_KEY, ram_fallback))
