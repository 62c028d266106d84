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

"""Every host-aggregate metadata key nova-drs reads, declared and parsed here.

Modelled on nova's own aggregate helpers (``nova.scheduler.utils.
get_weight_multiplier``, ``nova.scheduler.filters.utils.
aggregate_values_from_key`` / ``validate_num_values``): a key overrides one
option, is read from each aggregate of a host (or from the aggregate of a
DRS cluster), several values combine by a declared rule (smallest wins, as
nova's helpers do for ratios and multipliers), and an invalid value is
ignored with one warning per aggregate, key and value, so the option (or
the other aggregates' values) apply. The scheduler weighers and filters,
the nova-loadbalancer daemon and the ``/loadbalancer`` API all read keys
through this module, so one key means the same in all of them.

Aggregates are passed as ``(name, metadata)`` pairs, which nova's Aggregate
objects and the dicts of the REST API both give cheaply.
"""

import dataclasses
import math
import threading

from oslo_log import log as logging
from oslo_utils import strutils

from nova_drs.conf import policy_names
from nova_drs.observability import power_model
from nova_drs.overcommit import accounting

LOG = logging.getLogger(__name__)

#: How the values of several aggregates combine.
SMALLEST = 'smallest valid value of the host\'s aggregates'
CLUSTER = 'the DRS cluster\'s aggregate (the first by name with drs_policy)'
ONE_POLICY = 'one policy across the host\'s aggregates, else the option'
ANY_TRUE = 'the host\'s aggregate with the lowest id that says true'
FIRST_BY_NAME = 'the host\'s first aggregate (by name) with a valid value'


def _number(low, high):
    def parse(raw):
        value = float(raw)
        if not low <= value <= high:  # NaN too
            raise ValueError
        return value
    return parse


def _ratio(raw):
    value = accounting.parse_ratio(raw)
    if value is None:
        raise ValueError
    return value


def _finite(raw):
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError
    return value


def _integer(raw):
    value = int(str(raw).strip())
    if value < 0:
        raise ValueError
    return value


def _word(words):
    def parse(raw):
        value = str(raw).strip().lower()
        if value not in words:
            raise ValueError
        return value
    return parse


def _boolean(raw):
    return strutils.bool_from_string(raw, strict=True)


@dataclasses.dataclass(frozen=True)
class Key:
    """One metadata key: what it holds and what it overrides."""

    name: str
    parse: object       # raw string -> value; ValueError when invalid
    expected: str       # what a valid value looks like (for the warning)
    unit: str
    overrides: str      # the option (or default) a valid value replaces
    combine: str        # how the values of several aggregates combine
    deprecated_names: tuple = ()


_RATIO_RANGE = 'a number in (0, %g]' % accounting.MAX_ALLOCATION_RATIO
POLICIES = policy_names.POLICIES
AUTOMATION_LEVELS = policy_names.AUTOMATION_LEVELS
#: The keys other modules name: spelled here, next to their declaration.
POLICY_KEY = 'drs_policy'
AUTOMATION_KEY = 'drs_automation'
HIGH_UTILIZATION_KEY = 'high_utilization'
SCALE_ENABLED_KEY = 'drs_scale_enabled'
POWER_CURVE_KEY = 'drs_power_curve'

_KEYS = (
    Key(POLICY_KEY, _word(POLICIES), ' | '.join(POLICIES), '',
        '[loadbalancer] default_policy', ONE_POLICY),
    Key(AUTOMATION_KEY, _word(AUTOMATION_LEVELS), ' | '.join(AUTOMATION_LEVELS), '',
        '[loadbalancer] automation', CLUSTER),
    Key(accounting.CPU_KEY, _ratio, _RATIO_RANGE, 'ratio',
        'the host\'s own cpu_allocation_ratio (nova.conf, placement)', SMALLEST),
    Key(accounting.RAM_KEY, _ratio, _RATIO_RANGE, 'ratio',
        'the host\'s own ram_allocation_ratio (nova.conf, placement)', SMALLEST),
    Key('min_active_hosts', _integer, 'an integer >= 0', 'hosts',
        '[loadbalancer] min_active_hosts', CLUSTER),
    Key('hosts_in_reserve', _integer, 'an integer >= 0', 'hosts',
        '[loadbalancer] hosts_in_reserve', CLUSTER),
    Key(HIGH_UTILIZATION_KEY, _number(1, 100), 'a number in [1, 100]',
        'percent', '[drs_scheduler] high_utilization_percent (weighers) and the '
        'policy\'s overload threshold (daemon: [loadbalancer] overload_cpu for drs, '
        'the even_distribution high mark)', CLUSTER,
        deprecated_names=('drs_high_utilization_percent',)),
    Key('low_utilization', _number(0, 100), 'a number in [0, 100]', 'percent',
        '[loadbalancer] underload_predicted (drs policy)', CLUSTER),
    Key('overcommit_duration', _number(1, 1440), 'a number in [1, 1440]', 'minutes',
        '[loadbalancer] history_window (drs) / the even_distribution window, '
        'in cycles of [loadbalancer] period', CLUSTER),
    Key('balance_tolerance', _number(0, 100), 'a number in [0, 100]', 'percent',
        'the even_distribution tolerance (default 10)', CLUSTER),
    Key('drs_power_saving_weight_multiplier', _finite, 'a number', '',
        '[drs_scheduler] power_saving_weight_multiplier', SMALLEST),
    Key('drs_even_distribution_weight_multiplier', _finite, 'a number', '',
        '[drs_scheduler] even_distribution_weight_multiplier', SMALLEST),
    Key('drs_migration_weight_multiplier', _finite, 'a number', '',
        '[drs_scheduler] migration_weight_multiplier', SMALLEST),
    Key(SCALE_ENABLED_KEY, _boolean, 'true | false', '',
        '[drs_scale] enabled (both must be true)', ANY_TRUE),
    Key(POWER_CURVE_KEY, power_model.parse_curve,
        '11 non-decreasing watt figures at 0, 10, ..., 100 % CPU', 'W',
        '[drs_energy] power_curve', FIRST_BY_NAME),
)

#: Every key by name.
KEYS = {key.name: key for key in _KEYS}


class Reader:
    """Parses aggregate metadata, warning once per (aggregate, key, value).

    One Reader per process role (the scheduler's weighers, the daemon, the
    API) keeps one warning per bad value however many hosts or requests
    meet it.
    """

    def __init__(self):
        self._warned = set()
        self._lock = threading.Lock()

    def _first_time(self, marker):
        with self._lock:
            if marker in self._warned:
                return False
            self._warned.add(marker)
            return True

    def warn_invalid(self, aggregate, key, value, expected):
        """Log once per (aggregate, key, value): the value is ignored."""
        if self._first_time((aggregate, key, value)):
            LOG.warning('aggregate %s: ignoring invalid metadata %s=%r (expected %s)',
                        aggregate, key, value, expected)

    def _raw(self, aggregate, metadata, key):
        metadata = metadata or {}
        raw = metadata.get(key.name)
        for old in key.deprecated_names:
            if old in metadata:
                if self._first_time((aggregate, old, 'deprecated')):
                    LOG.warning('aggregate %s: metadata %s is deprecated, set %s instead%s',
                                aggregate, old, key.name,
                                '' if raw is None else ' (%s wins)' % key.name)
                if raw is None:
                    raw = metadata[old]
        return raw

    def value(self, aggregate, metadata, name, fallback=None):
        """Key ``name`` of one aggregate: its valid value, else ``fallback``."""
        key = KEYS[name]
        raw = self._raw(aggregate, metadata, key)
        if raw is None:
            return fallback
        try:
            return key.parse(raw)
        except (TypeError, ValueError):
            self.warn_invalid(aggregate, name, raw, key.expected)
            return fallback

    def values(self, aggregates, name):
        """The valid values of key ``name`` in ``(name, metadata)`` pairs."""
        found = []
        for aggregate, metadata in aggregates:
            value = self.value(aggregate, metadata, name)
            if value is not None:
                found.append(value)
        return found

    def smallest(self, aggregates, name, fallback):
        """The smallest valid value of key ``name`` across ``aggregates``, else
        ``fallback`` (nova's ``validate_num_values(based_on=min)``)."""
        found = self.values(aggregates, name)
        return min(found) if found else fallback


#: The Reader of code that has no role-specific one (ratios, energy, API).
READER = Reader()
