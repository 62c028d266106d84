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

"""Overcommit capacity accounting (CloudStack model), pure functions.

Every instance remembers the allocation ratio ``x`` it was deployed with.
When the ratio of its host's aggregate becomes ``y``:

* total capacity = physical * y
* an instance of flavor size ``f`` counts ``f / x * y`` when the ratio was
  raised (y > x): it keeps its guaranteed share ``f / x`` under contention
  (the seed's worked examples);
* it counts its full flavor size ``f`` when the ratio was lowered (y < x):
  the instance can still use all of ``f`` and placement itself counts ``f``,
  so a lowered ratio may leave the host over 100 % (the seed's "caveats"
  example: 3 x 1 GB at ratio 2 on 2 GB, ratio lowered to 1 -> 150 %). Such a
  host accepts no new instance until usage falls below the new total.

Hence an instance counts ``f * max(1, y / x)``. No nova imports here: the
filters, weighers, report and sync all share these functions.
"""

import dataclasses
import math

#: Largest aggregate ratio accepted. Nothing real overcommits CPU or RAM a
#: hundredfold; a larger value is a typo (``1e9``) and is ignored.
MAX_ALLOCATION_RATIO = 100.0

CPU_KEY = 'cpu_allocation_ratio'
RAM_KEY = 'ram_allocation_ratio'


def parse_ratio(raw):
    """The ratio as a float, or None when it is not in (0, MAX]."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value <= 0 or value > MAX_ALLOCATION_RATIO:
        return None
    return value


def scale_factor(deployed_ratio, current_ratio):
    """How much one unit of flavor counts now: ``max(1, y / x)``."""
    if not deployed_ratio or deployed_ratio <= 0:
        return 1.0
    return max(1.0, current_ratio / deployed_ratio)


def counted_usage(amount, deployed_ratio, current_ratio):
    """Capacity an instance of ``amount`` deployed at ``deployed_ratio`` uses now."""
    return amount * scale_factor(deployed_ratio, current_ratio)


def extra_usage(amount_by_deployed_ratio, current_ratio):
    """Usage to add to the nominal (flavor-sized) usage of recorded instances.

    ``amount_by_deployed_ratio`` maps a deployed-with ratio to the summed
    flavor amount of the host's instances recorded with it. Nominal usage
    (nova's ``vcpus_used``/used RAM) already counts each instance once at its
    flavor size, including instances nova-drs has not recorded yet, which
    therefore count as deployed with the current ratio.
    """
    extra = 0.0
    for ratio, amount in amount_by_deployed_ratio.items():
        if ratio and 0 < ratio < current_ratio:  # == scale_factor(ratio, current) - 1 > 0
            extra += amount * (current_ratio / ratio - 1.0)
    return extra


@dataclasses.dataclass(frozen=True)
class Capacity:
    """One resource of one host, in the unit of the flavor (vCPU, MB, MHz)."""

    physical: float
    ratio: float
    total: float
    used: float

    @property
    def free(self):
        return self.total - self.used

    @property
    def percent(self):
        if self.total <= 0:
            return 0.0 if self.used <= 0 else math.inf
        return 100.0 * self.used / self.total

    @property
    def exceeded(self):
        return self.used > self.total

    def fits(self, requested):
        return requested <= self.free


def used_and_total(physical, current_ratio, nominal_used=0.0, amount_by_deployed_ratio=None):
    """(used, total): ``nominal_used`` plus the scaling of recorded instances."""
    used = nominal_used
    if amount_by_deployed_ratio:
        used += extra_usage(amount_by_deployed_ratio, current_ratio)
    return used, physical * current_ratio


def capacity(physical, current_ratio, nominal_used=0.0, amount_by_deployed_ratio=None):
    """Capacity of a host: ``nominal_used`` plus the scaling of recorded instances."""
    used, total = used_and_total(physical, current_ratio, nominal_used,
                                 amount_by_deployed_ratio)
    return Capacity(physical=physical, ratio=current_ratio, total=total, used=used)


def capacity_of_instances(physical, current_ratio, instances):
    """Capacity from ``(flavor amount, deployed-with ratio)`` pairs only."""
    used = sum(counted_usage(amount, ratio, current_ratio) for amount, ratio in instances)
    return Capacity(physical=physical, ratio=current_ratio,
                    total=physical * current_ratio, used=used)
