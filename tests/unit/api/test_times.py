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

"""Times in and out of the API: RFC 3339 UTC date-times (doc/api/openapi.yaml)."""

import datetime
import json
import unittest
from unittest import mock

import webob.exc

from nova_drs.api import energy as energy_api
from nova_drs.api import explain
from nova_drs.api import faults
from nova_drs.observability import energy

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 3, 4, 5, 6, 7, 890123)


class TestRendering(unittest.TestCase):

    def test_naive_times_are_utc_with_a_zone(self):
        self.assertEqual('2026-03-04T05:06:07.890123Z', faults.isotime(NOW))
        self.assertEqual('2026-03-04T05:06:07Z', faults.isotime(NOW.replace(microsecond=0)))

    def test_aware_times_are_moved_to_utc(self):
        paris = datetime.timezone(datetime.timedelta(hours=1))
        self.assertEqual('2026-03-04T04:06:07Z',
                         faults.isotime(datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=paris)))

    def test_every_time_of_a_body_is_rendered_so(self):
        body = json.loads(faults.json_response(
            {'rule': {'id': 1, 'created_at': NOW}, 'at': [NOW.replace(microsecond=0)]}).text)
        self.assertEqual({'rule': {'id': 1, 'created_at': '2026-03-04T05:06:07.890123Z'},
                          'at': ['2026-03-04T05:06:07Z']}, body)
        parsed = datetime.datetime.fromisoformat(body['rule']['created_at'])
        self.assertEqual(NOW.replace(tzinfo=UTC), parsed)


class TestSince(unittest.TestCase):
    """``since`` of GET /loadbalancer/energy: every RFC 3339 time in the past."""

    def parse(self, text):
        return energy.parse_since(text, NOW)

    def test_rfc3339_forms(self):
        expected = datetime.datetime(2026, 1, 2, 3, 4, 5)
        for text in ('2026-01-02T03:04:05Z', '2026-01-02t03:04:05z',
                     '2026-01-02T04:04:05+01:00', '2026-01-02T03:04:05'):
            self.assertEqual(expected, self.parse(text), text)

    def test_before_year_one_in_utc_is_the_beginning(self):
        self.assertEqual(datetime.datetime.min, self.parse('0001-01-01T00:00:00+23:59'))

    def test_a_duration_reaching_before_year_one_is_the_beginning(self):
        # 860632 days before 2026 is before year 1: was a 500 (OverflowError),
        # found by the integration tier's schemathesis run.
        self.assertEqual(datetime.datetime.min, self.parse('860632d'))
        self.assertEqual(datetime.datetime.min, self.parse('999999d'))
        self.assertEqual(NOW - datetime.timedelta(days=739000), self.parse('739000d'))

    def test_after_year_9999_in_utc_is_not_in_the_past(self):
        with self.assertRaisesRegex(ValueError, 'not in the past'):
            self.parse('9999-12-31T23:59:59-23:59')

    def test_refused(self):
        for text in ('2026-03-04T05:06:08', 'yesterday', '2026-13-01T00:00:00Z'):
            self.assertRaises(ValueError, self.parse, text)

    @mock.patch.object(energy, 'report', return_value={'since': 'x', 'until': 'y'})
    @mock.patch.object(energy_api, 'objects')
    @mock.patch('oslo_utils.timeutils.utcnow', return_value=NOW)
    def test_the_report_names_its_period_in_utc(self, _now, objects, _report):
        objects.AggregateList.get_all.return_value = []
        status, body = energy_api.EnergyController(None).report(None, since='12h')
        self.assertEqual(200, status)
        self.assertEqual(('2026-03-03T17:06:07.890123Z', '2026-03-04T05:06:07.890123Z'),
                         (body['energy']['since'], body['energy']['until']))

    def test_the_api_answers_400_for_a_future_time(self):
        with self.assertRaises(webob.exc.HTTPBadRequest):
            energy_api.EnergyController(None).report(None, since='9999-01-01T00:00:00Z')


class TestExplainTimes(unittest.TestCase):

    @mock.patch.object(explain.drs_hosts, 'public_records',
                       return_value={'h1': {'suspend_state': 'suspended',
                                            'state_changed_at': NOW, 'state_reason': 'idle'}})
    @mock.patch.object(explain.decisions, 'explain',
                       return_value=[{'cycle_at': NOW, 'verdict': 'suspend'}])
    @mock.patch.object(explain.nova_hosts, 'compute_hosts', return_value={'h1': {}})
    def test_cycle_and_state_times_are_utc(self, _hosts, _decisions, _records):
        status, body = explain.ExplainController(None).host(None, 'h1')
        self.assertEqual(200, status)
        self.assertEqual('2026-03-04T05:06:07.890123Z', body['decisions'][0]['cycle_at'])
        self.assertEqual('2026-03-04T05:06:07.890123Z', body['state']['since'])
