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

"""Host overload detectors (Beloglazov & Buyya 2012, CloudSim 3.0.3).

Each detector answers ``is_overloaded(state, host)`` from the host's current
demand and its history (newest first).  The adaptive ones fall back to a
static 0.7 threshold while history is too short, as CloudSim does.
"""

import math

from nova_drs.loadbalancer import schema
from nova_drs.loadbalancer import stats


@schema.algorithm
class StaticThreshold:
    """THR: overloaded when current demand exceeds a fixed fraction."""

    PARAMETERS = schema.params(
        threshold=schema.fraction(0.8, 'overloaded when current CPU demand is above this'))

    def is_overloaded(self, state, i):
        return state.demand[i] / state.capacity[i] > self.threshold


FALLBACK = StaticThreshold(0.7)


class _Adaptive:
    """A detector that reads the host's history; ``FALLBACK`` answers until
    the history is ``enough``."""

    def is_overloaded(self, state, i):
        history = state.history(i)
        if not self.enough(history):
            return FALLBACK.is_overloaded(state, i)
        return self.judge(state, i, history)


@schema.algorithm
class InterQuartileRange(_Adaptive):
    """IQR: threshold 1 - s * IQR(history) once 12 non-zero samples exist."""

    PARAMETERS = schema.params(
        safety=schema.number(1.5, 'threshold = 1 - safety x IQR of the CPU history', 'factor'))

    min_samples = 12

    def spread(self, history):
        return stats.iqr(history)

    def enough(self, history):
        return stats.count_nonzero_prefix(history) >= self.min_samples

    def judge(self, state, i, history):
        threshold = 1 - self.safety * self.spread(history)
        return state.demand[i] / state.capacity[i] > threshold


@schema.algorithm
class MedianAbsoluteDeviation(InterQuartileRange):
    """MAD: threshold 1 - s * MAD(history)."""

    PARAMETERS = schema.params(
        safety=schema.number(2.5, 'threshold = 1 - safety x MAD of the CPU history', 'factor'))

    def spread(self, history):
        return stats.mad(history)


@schema.algorithm
class LocalRegression(_Adaptive):
    """LR: fit a line to the last 10 samples, predict one migration ahead;
    overloaded when ``safety * predicted >= 1``."""

    PARAMETERS = schema.params(
        safety=schema.number(1.2, 'overloaded when safety x predicted CPU >= 1', 'factor'),
        migration_intervals=schema.integer(1, 'how far ahead the line is read', 'samples'))

    length = 10

    def fit(self, values):
        return stats.linear_fit(values)

    def enough(self, history):
        return len(history) >= self.length

    def judge(self, state, i, history):
        intercept, slope = self.fit(history[self.length - 1::-1])
        predicted = intercept + slope * (self.length + self.migration_intervals)
        return predicted * self.safety >= 1


class LocalRegressionRobust(LocalRegression):
    """LRR: as LR, but samples whose residual exceeds six median absolute
    residuals get zero weight (bisquare) and the line is refitted.

    CloudSim 3.0.3 computes these weights but never applies them, which is
    why its LRR equals LR; here they are applied.
    """

    def fit(self, values):
        intercept, slope = stats.linear_fit(values)
        residuals = [y - (intercept + slope * x) for x, y in enumerate(values, 1)]
        scale = 6 * stats.median([abs(r) for r in residuals])
        if scale == 0:
            return intercept, slope
        weights = [max(0.0, 1 - (r / scale) ** 2) ** 2 for r in residuals]
        return _weighted_fit(values, weights) or (intercept, slope)


def _weighted_fit(values, weights):
    total = sum(weights)
    if total == 0:
        return None
    mean_x = sum(w * x for x, w in enumerate(weights, 1)) / total
    mean_y = sum(w * y for y, w in zip(values, weights, strict=True)) / total
    sxx = sum(w * (x - mean_x) ** 2 for x, w in enumerate(weights, 1))
    if sxx == 0 or math.isnan(sxx):
        return None
    sxy = sum(w * (x - mean_x) * (y - mean_y)
              for x, (y, w) in enumerate(zip(values, weights, strict=True), 1))
    slope = sxy / sxx
    return mean_y - slope * mean_x, slope
