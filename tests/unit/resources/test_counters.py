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

"""CPU % and rates from cumulative counters."""

import unittest

from nova_drs.resources import counters

SECOND_NS = 10 ** 9


class TestCpuPercent(unittest.TestCase):

    def test_steady_load(self):
        # 2 vCPUs, 10 s, 10 s of CPU time in total -> 50 %
        self.assertAlmostEqual(50.0, counters.cpu_percent(
            100 * SECOND_NS, 110 * SECOND_NS, 10, 2))

    def test_first_sample_has_no_rate(self):
        self.assertIsNone(counters.cpu_percent(None, 5 * SECOND_NS, 10, 1))

    def test_no_elapsed_time_has_no_rate(self):
        self.assertIsNone(counters.cpu_percent(SECOND_NS, 2 * SECOND_NS, 0, 1))

    def test_wrap_around_of_64_bit_counter(self):
        previous = 2 ** 64 - 2 * SECOND_NS
        current = 3 * SECOND_NS  # 5 s of CPU time across the wrap
        self.assertAlmostEqual(50.0, counters.cpu_percent(previous, current, 10, 1))

    def test_wrap_around_of_32_bit_counter(self):
        self.assertAlmostEqual(
            100.0 * 300 / 1e9,
            counters.cpu_percent(2 ** 32 - 100, 200, 1, 1, counter_max=2 ** 32))

    def test_restart_counts_from_zero(self):
        # domain restarted: the counter fell from 500 s to 4 s of CPU time
        self.assertAlmostEqual(40.0, counters.cpu_percent(
            500 * SECOND_NS, 4 * SECOND_NS, 10, 1))

    def test_vcpu_increase_uses_larger_count(self):
        # resized 1 -> 4 vCPUs; 4 vCPUs busy for the whole 10 s is 100 %
        self.assertAlmostEqual(100.0, counters.cpu_percent(0, 40 * SECOND_NS, 10, 4, 1))
        self.assertAlmostEqual(25.0, counters.cpu_percent(0, 10 * SECOND_NS, 10, 4, 1))

    def test_vcpu_decrease_never_exceeds_100(self):
        # 4 -> 1 vCPUs: the 4 vCPUs were busy before the resize
        self.assertAlmostEqual(75.0, counters.cpu_percent(0, 30 * SECOND_NS, 10, 1, 4))

    def test_clamped_to_100(self):
        self.assertEqual(100.0, counters.cpu_percent(0, 30 * SECOND_NS, 10, 1))

    def test_no_vcpus(self):
        self.assertIsNone(counters.cpu_percent(0, SECOND_NS, 10, 0))


class TestRate(unittest.TestCase):

    def test_rate(self):
        self.assertAlmostEqual(20.0, counters.rate(100, 300, 10))

    def test_rate_after_restart(self):
        self.assertAlmostEqual(5.0, counters.rate(1000, 50, 10))

    def test_rate_without_baseline(self):
        self.assertIsNone(counters.rate(None, 50, 10))
