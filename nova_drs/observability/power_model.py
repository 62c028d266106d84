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

"""Power model: watts from CPU utilisation, energy from a host's state history.

Pure (no I/O): a SPECpower-style curve gives the watts a powered-on host
draws at 0, 10, ..., 100 % CPU, linear in between; a suspended host draws a
fixed standby figure. "Saved" compares with the same hosts all left on: a
suspended host would have drawn its idle watts (its servers' load moved to
other hosts, which a linear curve prices the same wherever it runs).
"""

import dataclasses

from nova_drs.loadbalancer import power

POINTS = 11
#: States in which the host is powered down (standby watts only).
DOWN_STATES = frozenset(('suspended',))


def parse_curve(text):
    """A curve from "w0,w10,...,w100"; ValueError names what is wrong."""
    try:
        points = tuple(float(part) for part in str(text).split(','))
    except ValueError:
        raise ValueError('power curve %r: not a list of numbers' % text) from None
    if len(points) != POINTS or list(points) != sorted(points) or points[0] < 0:
        raise ValueError('power curve %r: needs %d non-decreasing watt figures '
                         '(0, 10, ..., 100 %% CPU)' % (text, POINTS))
    return points


def watts(curve, utilisation):
    """Watts at ``utilisation`` (0..1, clamped): the decision core's interpolation."""
    return power.power(curve, utilisation)


def intervals(initial_state, changes, since, until):
    """[(state, seconds)] a host spent in each state between ``since`` and ``until``.

    ``changes`` are (changed_at, state) pairs sorted by time; ``initial_state``
    is the state at ``since``.
    """
    spans = []
    state, start = initial_state, since
    for changed_at, new_state in changes:
        if changed_at <= since:
            state = new_state
            continue
        if changed_at >= until:
            break
        spans.append((state, (changed_at - start).total_seconds()))
        state, start = new_state, changed_at
    spans.append((state, (until - start).total_seconds()))
    return [(s, seconds) for s, seconds in spans if seconds > 0]


@dataclasses.dataclass
class HostEnergy:
    """Watt-hours one host drew and saved over a period."""

    drawn_wh: float = 0.0
    saved_wh: float = 0.0
    suspended_hours: float = 0.0
    measured: bool = False


def host_energy(spans, curve, utilisation, standby_watts, measured_watts=None):
    """HostEnergy of one host over ``spans``.

    ``measured_watts`` (a BMC reading) replaces the curve while the host is on.
    """
    result = HostEnergy(measured=measured_watts is not None)
    on_watts = measured_watts if measured_watts is not None else watts(curve, utilisation)
    idle = watts(curve, 0.0)
    for state, seconds in spans:
        hours = seconds / 3600.0
        if state in DOWN_STATES:
            result.drawn_wh += standby_watts * hours
            result.saved_wh += max(idle - standby_watts, 0.0) * hours
            result.suspended_hours += hours
        else:
            result.drawn_wh += on_watts * hours
    return result


def power_now(state, curve, utilisation, standby_watts, measured_watts=None):
    """(watts drawn now, watts saved now against the host being on)."""
    if state in DOWN_STATES:
        return standby_watts, max(watts(curve, 0.0) - standby_watts, 0.0)
    if measured_watts is not None:
        return measured_watts, 0.0
    return watts(curve, utilisation), 0.0
