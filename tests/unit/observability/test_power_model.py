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

"""The pure power model: curve, interpolation, state spans and energy."""

import datetime

import pytest

from nova_drs.observability import power_model

CURVE = (100, 120, 135, 150, 165, 180, 195, 210, 225, 240, 250)
T0 = datetime.datetime(2026, 1, 1)


def at(minutes):
    return T0 + datetime.timedelta(minutes=minutes)


def test_parse_curve_accepts_eleven_non_decreasing_figures():
    assert power_model.parse_curve(','.join(map(str, CURVE))) == tuple(map(float, CURVE))


@pytest.mark.parametrize('text', ['', '1,2,3', 'a,b,c,d,e,f,g,h,i,j,k',
                                  '250,240,225,210,195,180,165,150,135,120,100',
                                  '-1,0,0,0,0,0,0,0,0,0,0'])
def test_parse_curve_rejects_bad_text(text):
    with pytest.raises(ValueError, match='power curve'):
        power_model.parse_curve(text)


@pytest.mark.parametrize('utilisation, expected', [
    (0.0, 100), (0.1, 120), (0.15, 127.5), (1.0, 250), (1.7, 250), (-0.5, 100)])
def test_watts_interpolates_and_clamps(utilisation, expected):
    assert power_model.watts(CURVE, utilisation) == pytest.approx(expected)


def test_intervals_split_the_period_at_each_change():
    changes = [(at(-5), 'suspending'), (at(10), 'suspended'), (at(40), 'waking'),
               (at(70), 'active')]
    spans = power_model.intervals('active', changes, at(0), at(60))
    assert spans == [('suspending', 600.0), ('suspended', 1800.0), ('waking', 1200.0)]


def test_host_energy_prices_suspended_time_at_standby_and_saves_idle():
    spans = [('active', 3600.0), ('suspended', 7200.0)]
    energy = power_model.host_energy(spans, CURVE, 0.1, 5.0)
    assert energy.drawn_wh == pytest.approx(120 + 2 * 5)
    assert energy.saved_wh == pytest.approx(2 * 95)
    assert energy.suspended_hours == pytest.approx(2)
    assert not energy.measured


def test_measured_watts_replace_the_curve_while_on():
    energy = power_model.host_energy([('active', 3600.0)], CURVE, 0.1, 5.0,
                                     measured_watts=180.0)
    assert energy.drawn_wh == pytest.approx(180)
    assert energy.measured


def test_power_now():
    assert power_model.power_now('suspended', CURVE, 0.9, 5.0) == (5.0, 95.0)
    assert power_model.power_now('active', CURVE, 0.5, 5.0) == (180.0, 0.0)
    assert power_model.power_now('maintenance', CURVE, 0.0, 5.0, 90.0) == (90.0, 0.0)
