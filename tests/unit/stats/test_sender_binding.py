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

"""Samples bound to sane values: what no monitor sends is refused.

The binding to the sender, over the real RabbitMQ, is in
tests/component/stats/test_sender_binding.py.
"""

import unittest

from nova_drs import exception
from nova_drs.stats import ingest
from tests.unit.stats import test_store


class TestValueBounds(unittest.TestCase):

    def test_values_the_monitor_cannot_send_are_refused(self):
        def broken(change):
            sample = test_store.sample('h1', 1, ['u1'])
            change(sample)
            return sample

        cases = (
            lambda s: s['host_stats'].update(cpu_used_percent=100.5),
            lambda s: s['host_stats'].update(cpu_used_percent=-1),
            lambda s: s['host_stats'].update(cpu_used_percent=float('nan')),
            lambda s: s['host_stats'].update(memory_used=-5),
            lambda s: s['host_stats'].update(memory_used=2000),  # > memory_total 1000
            lambda s: s['instances'][0].update(cpu_used_percent=1e9),
            lambda s: s['instances'][0].update(cpu_time=2 ** 64),
            lambda s: s['instances'][0].update(mem=-64),
        )
        now = test_store.T0
        for index, change in enumerate(cases):
            # The case's index, not the lambda: a subtest's parameters travel
            # to pytest-xdist's controller, which cannot take a function.
            with self.subTest(case=index):
                with self.assertRaises(exception.InvalidSample) as raised:
                    ingest.rows_from_sample(broken(change), now)
                self.assertEqual(ingest.OUT_OF_RANGE, raised.exception.reason)
        host_row, _rows = ingest.rows_from_sample(
            broken(lambda s: s['host_stats'].update(cpu_used_percent=100, memory_used=1000)),
            now)
        self.assertEqual((100.0, 1000), (host_row['cpu_used_percent'], host_row['memory_used']))


