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
no valid value is left.
"""

import threading

from oslo_log import log as logging

from nova_drs.overcommit import accounting

LOG = logging.getLogger(__name__)

_warned = set()
_warned_lock = threading.Lock()


def _warn_once(aggregate, key, raw):
    name = getattr(aggregate, 'name', None) or getattr(aggregate, 'id', '?')
    marker = (getattr(aggregate, 'id', name), key, raw)
    with _warned_lock:
        if marker in _warned:
            return
        _warned.add(marker)
    LOG.warning('Ignoring invalid metadata %(key)s=%(raw)r of aggregate %(name)s: '
                'expected a number greater than 0 and at most %(max)s; the '
                'host\'s own allocation ratio applies instead',
                {'key': key, 'raw': raw, 'name': name,
                 'max': accounting.MAX_ALLOCATION_RATIO})


def aggregate_ratio(aggregates, key, fallback):
    """Effective ratio ``key`` for a host in ``aggregates`` (objects with metadata)."""
    valid = []
    for aggregate in aggregates or ():
        raw = (getattr(aggregate, 'metadata', None) or {}).get(key)
        if raw is None:
            continue
        value = accounting.parse_ratio(raw)
        if value is None:
            _warn_once(aggregate, key, raw)
        else:
            valid.append(value)
    return accounting.effective_ratio(valid, fallback)


def host_ratios(aggregates, cpu_fallback, ram_fallback):
    """(cpu ratio, ram ratio) of a host."""
    return (aggregate_ratio(aggregates, accounting.CPU_KEY, cpu_fallback),
            aggregate_ratio(aggregates, accounting.RAM_KEY, ram_fallback))
