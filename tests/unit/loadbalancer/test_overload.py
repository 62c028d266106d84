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

import pytest

from nova_drs.loadbalancer import overload
from tests.unit.loadbalancer import fakes


def one_host(history, mips=200.0, host_mips=200.0):
    """One VM as big as its host, so host history == VM history."""
    return fakes.working([fakes.host('h', mips=host_mips)],
                         [fakes.vm('v', 'h', mips=mips, history=history)])


def test_static_threshold_is_strict():
    assert not overload.StaticThreshold(0.8).is_overloaded(one_host([0.8]), 0)
    assert overload.StaticThreshold(0.8).is_overloaded(one_host([0.81]), 0)


def test_iqr_falls_back_to_thr_07_with_short_history():
    detector = overload.InterQuartileRange(1.5)
    assert detector.is_overloaded(one_host([0.5] * 10 + [0.75]), 0)      # 0.75 > 0.7
    assert not detector.is_overloaded(one_host([0.5] * 10 + [0.65]), 0)
    # a zero inside the newest 12 samples also means "too short" (CloudSim)
    assert detector.is_overloaded(one_host([0.5] * 5 + [0.0] + [0.5] * 5 + [0.75]), 0)


def test_iqr_threshold_from_history():
    # sorted: .1 .1 .2 .2 .3 .3 .4 .4 .5 .5 .6 .6; q25 at pos 3.25 -> 0.2,
    # q75 at pos 9.75 -> 0.5; threshold = 1 - 1.5 * 0.3 = 0.55
    history = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] * 2
    assert overload.InterQuartileRange(1.5).is_overloaded(one_host(history), 0)  # current 0.6
    assert not overload.InterQuartileRange(1.5).is_overloaded(one_host(history[:-1] + [0.5]), 0)


def test_mad_threshold_from_history():
    history = [0.4] * 6 + [0.5] * 6    # median 0.45, deviations all 0.05 -> MAD 0.05
    detector = overload.MedianAbsoluteDeviation(2.5)   # threshold 1 - 0.125 = 0.875
    assert not detector.is_overloaded(one_host(history), 0)
    assert detector.is_overloaded(one_host(history[:-1] + [0.9]), 0)


def test_local_regression_rule_safety_times_prediction_at_least_one():
    rising = [0.35 + 0.05 * k for k in range(10)]   # 0.40 .. 0.80 at x = 1..10 -> 0.85 at 11
    assert overload.LocalRegression(1.2).is_overloaded(one_host(rising), 0)   # 1.02 >= 1
    assert not overload.LocalRegression(1.1).is_overloaded(one_host(rising), 0)  # 0.935


def test_local_regression_falls_back_with_fewer_than_10_samples():
    assert overload.LocalRegression(1.2).is_overloaded(one_host([0.75] * 9), 0)
    assert not overload.LocalRegression(1.2).is_overloaded(one_host([0.6] * 9), 0)


def test_robust_regression_ignores_an_outlier():
    flat = [0.5] * 9 + [0.5]
    spiky = [0.5, 0.5, 0.5, 0.5, 0.99, 0.5, 0.5, 0.5, 0.52, 0.5]
    robust = overload.LocalRegressionRobust(1.9)
    plain = overload.LocalRegression(1.9)
    assert not robust.is_overloaded(one_host(flat), 0)
    intercept, slope = robust.fit(spiky)
    assert intercept + slope * 11 == pytest.approx(0.5, abs=0.03)
    assert plain.fit(spiky) != robust.fit(spiky)
