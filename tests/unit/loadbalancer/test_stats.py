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

from nova_drs.loadbalancer import stats


def test_percentile_uses_commons_math_legacy_positions():
    # n=4, p=25: pos = 1.25 -> 1 + 0.25 * (2 - 1)
    assert stats.percentile([4, 1, 3, 2], 25) == pytest.approx(1.25)
    # p=75: pos = 3.75 -> 3 + 0.75 * (4 - 3)
    assert stats.percentile([1, 2, 3, 4], 75) == pytest.approx(3.75)
    assert stats.percentile([5], 50) == 5
    assert stats.percentile([1, 2], 10) == 1      # pos < 1 -> minimum
    assert stats.percentile([1, 2], 90) == 2      # pos >= n -> maximum


def test_iqr_and_mad():
    assert stats.iqr([1, 2, 3, 4]) == pytest.approx(2.5)
    # median 3, deviations 2,1,0,1,7 -> median 1
    assert stats.mad([1, 2, 3, 4, 10]) == pytest.approx(1)


def test_linear_fit_recovers_a_line():
    intercept, slope = stats.linear_fit([3, 5, 7, 9])  # y = 1 + 2x at x = 1..4
    assert intercept == pytest.approx(1)
    assert slope == pytest.approx(2)
    with pytest.raises(ValueError):
        stats.linear_fit([1])


def test_count_nonzero_prefix():
    assert stats.count_nonzero_prefix([0.3, 0.2, 0, 0.5]) == 2
    assert stats.count_nonzero_prefix([]) == 0


def test_r_squared_perfect_and_undefined():
    y = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert stats.r_squared(y, [[2.0, 4.0, 6.0, 8.0, 10.0]]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        stats.r_squared([1.0, 2.0], [[1.0, 2.0]])  # not enough samples
