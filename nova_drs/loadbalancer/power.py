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

"""Power curves: SPECpower tables (watts at 0, 10, ..., 100 % CPU)."""

HP_ML110_G4 = (86.0, 89.4, 92.6, 96.0, 99.5, 102.0, 106.0, 108.0, 112.0, 114.0, 117.0)
HP_ML110_G5 = (93.7, 97.0, 101.0, 105.0, 110.0, 116.0, 121.0, 125.0, 129.0, 133.0, 135.0)
# Unknown servers: idle at 70 % of peak, linear (relative units).
GENERIC_LINEAR = tuple(70.0 + 3.0 * i for i in range(11))

CURVES = {'hp-ml110-g4': HP_ML110_G4, 'hp-ml110-g5': HP_ML110_G5, 'generic': GENERIC_LINEAR}


def power(curve, utilisation):
    """Watts at a CPU fraction, interpolating between the 10 % points."""
    if utilisation <= 0:
        return curve[0]
    if utilisation >= 1:
        return curve[10]
    pos = utilisation * 10
    low = int(pos)
    return curve[low] + (curve[low + 1] - curve[low]) * (pos - low)
