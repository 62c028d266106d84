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

"""Seeded PlanetLab-like traces, for clouds larger than the shared days and for CI.

Each VM has a mean drawn from an exponential distribution (PlanetLab VMs
mostly idle, a few busy: mean about 12 %), a daily sine of its own phase
and Gaussian noise; values are whole percents clipped to 0-100, as in the
trace files, so ``traces.load_directory`` and this give the same shape.
"""

import math
import random

SAMPLES_PER_DAY = 288


def traces(count, samples=SAMPLES_PER_DAY, seed=0):
    """(names, per-VM fraction lists) of ``count`` synthetic VMs."""
    rng = random.Random(seed)
    names, data = [], []
    for v in range(count):
        mean = min(60.0, rng.expovariate(1 / 12.0))
        swing = mean * rng.uniform(0.2, 0.8)
        phase = rng.uniform(0, 2 * math.pi)
        noise = max(1.0, mean * 0.3)
        values = []
        for k in range(samples):
            level = mean + swing * math.sin(2 * math.pi * k / SAMPLES_PER_DAY + phase)
            values.append(min(100, max(1, round(level + rng.gauss(0, noise)))) / 100.0)
        names.append('vm-%05d' % v)
        data.append(values)
    return names, data
