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

"""Per-aggregate ratios from metadata: smallest wins, bad values warned once."""

import logging
import unittest
from unittest import mock

from nova_drs import aggregate_keys
from nova_drs.overcommit import ratios


class Aggregate:
    def __init__(self, id, metadata, name=None):
        self.id = id
        self.name = name or 'agg%d' % id
        self.metadata = metadata


class AggregateRatio(unittest.TestCase):

    def setUp(self):
        reader = mock.patch.object(aggregate_keys, 'READER', aggregate_keys.Reader())
        reader.start()
        self.addCleanup(reader.stop)

    def test_smallest_valid_value_wins(self):
        aggs = [Aggregate(1, {'cpu_allocation_ratio': '4.0'}),
                Aggregate(2, {'cpu_allocation_ratio': '2.0'}),
                Aggregate(3, {})]
        self.assertEqual(2.0, ratios.aggregate_ratio(aggs, 'cpu_allocation_ratio', 16.0))

    def test_fallback_without_metadata(self):
        self.assertEqual(16.0, ratios.aggregate_ratio([Aggregate(1, {})],
                                                      'cpu_allocation_ratio', 16.0))
        self.assertEqual(1.5, ratios.aggregate_ratio([], 'ram_allocation_ratio', 1.5))

    def test_bad_values_fall_back_and_warn_once_per_aggregate_and_value(self):
        for bad in ('abc', '-1', '0', '1e9'):
            with self.subTest(bad=bad):
                aggs = [Aggregate(7, {'ram_allocation_ratio': bad}, 'gold')]
                with self.assertLogs(aggregate_keys.LOG.logger, logging.WARNING) as logs:
                    for _ in range(50):  # 50 hosts / requests
                        self.assertEqual(1.0, ratios.aggregate_ratio(
                            aggs, 'ram_allocation_ratio', 1.0))
                self.assertEqual(1, len(logs.records))
                self.assertIn('gold', logs.output[0])
                self.assertIn(repr(bad), logs.output[0])

    def test_bad_value_ignored_next_to_a_good_one(self):
        aggs = [Aggregate(1, {'cpu_allocation_ratio': 'abc'}),
                Aggregate(2, {'cpu_allocation_ratio': '3'})]
        with self.assertLogs(aggregate_keys.LOG.logger, logging.WARNING):
            self.assertEqual(3.0, ratios.aggregate_ratio(aggs, 'cpu_allocation_ratio', 16.0))

    def test_host_ratios(self):
        aggs = [Aggregate(1, {'cpu_allocation_ratio': '2', 'ram_allocation_ratio': '1.25'})]
        self.assertEqual((2.0, 1.25), ratios.host_ratios(aggs, 16.0, 1.5))
