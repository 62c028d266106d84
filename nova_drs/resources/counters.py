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

"""Rates from cumulative counters (CPU time, disk requests), as pure functions.

Counters come from the hypervisor and can go backwards: a 32/64-bit counter
wraps around at its maximum, or restarts from zero when the domain is
restarted. Both are told apart by where the previous value was: only a
counter in the upper half of its range can wrap.
"""

NS_PER_SECOND = 1e9
COUNTER_MAX = 2 ** 64


def counter_delta(previous, current, counter_max=COUNTER_MAX):
    """Increase of a cumulative counter between two readings.

    A decrease is a wrap-around when ``previous`` was in the upper half of
    the counter's range, otherwise a restart from zero during the interval
    (then ``current`` is all that was counted since).
    """
    if current >= previous:
        return current - previous
    if previous >= counter_max // 2:
        return current + counter_max - previous
    return current


def cpu_percent(previous_ns, current_ns, elapsed_seconds, vcpus, previous_vcpus=None,
                counter_max=COUNTER_MAX):
    """CPU use of an instance in percent of its vCPUs, 0..100, or None.

    ``previous_ns``/``current_ns`` are cumulative CPU times (all vCPUs) in
    nanoseconds. When the vCPU count changed during the interval the larger
    count is used, so a resized instance never shows more than 100 %.
    None when there is no previous reading or no time elapsed.
    """
    if previous_ns is None or current_ns is None or elapsed_seconds <= 0:
        return None
    capacity = max(vcpus or 0, previous_vcpus or 0)
    if capacity <= 0:
        return None
    used = counter_delta(previous_ns, current_ns, counter_max)
    percent = 100.0 * used / (elapsed_seconds * NS_PER_SECOND * capacity)
    return min(100.0, max(0.0, percent))


def rate(previous, current, elapsed_seconds, counter_max=COUNTER_MAX):
    """Events per second of a cumulative counter, or None without a baseline."""
    if previous is None or current is None or elapsed_seconds <= 0:
        return None
    return counter_delta(previous, current, counter_max) / elapsed_seconds
