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

"""Overcommit accounting: the CloudStack seed's worked examples, same numbers.

The seed mixes "2 GHz" and "512 MHz"; its figures add up with 1 GHz = 1024
MHz (2 x 512 MHz = 1 GHz used of 2 GHz), which is the unit used here.
"""

import math
import unittest

from hypothesis import given
from hypothesis import strategies as st

from nova_drs.overcommit import accounting

GHZ = 1024
HOST = 2 * GHZ  # "Total cpu = 2GHZ"


class CpuOvercommitSeedExample(unittest.TestCase):

    def test_two_vms_at_ratio_1(self):
        cap = accounting.capacity_of_instances(HOST, 1, [(512, 1), (512, 1)])
        self.assertEqual((2 * GHZ, 1 * GHZ, 1 * GHZ), (cap.total, cap.used, cap.free))

    def test_ratio_raised_to_2_scales_used_and_total(self):
        cap = accounting.capacity_of_instances(HOST, 2, [(512, 1), (512, 1)])
        # totalCapacity = 4GHz, UsedCapacity = 2GHz, AvailableCapacity = 2GHz
        self.assertEqual((4 * GHZ, 2 * GHZ, 2 * GHZ), (cap.total, cap.used, cap.free))

    def test_two_1ghz_vms_at_ratio_2_fill_the_host(self):
        vms = [(512, 1), (512, 1), (GHZ, 2), (GHZ, 2)]
        cap = accounting.capacity_of_instances(HOST, 2, vms)
        self.assertEqual((4 * GHZ, 4 * GHZ, 0), (cap.total, cap.used, cap.free))
        self.assertFalse(cap.fits(1))

    def test_ratio_raised_to_3_keeps_the_host_full(self):
        vms = [(512, 1), (512, 1), (GHZ, 2), (GHZ, 2)]
        cap = accounting.capacity_of_instances(HOST, 3, vms)
        self.assertEqual((6 * GHZ, 6 * GHZ, 0), (cap.total, cap.used, cap.free))

    def test_restarted_vms_take_the_new_ratio(self):
        # one 512 MHz and one 1 GHz VM stopped and started at ratio 3
        vms = [(512, 3), (512, 1), (GHZ, 3), (GHZ, 2)]
        cap = accounting.capacity_of_instances(HOST, 3, vms)
        self.assertEqual((6 * GHZ, 4.5 * GHZ, 1.5 * GHZ), (cap.total, cap.used, cap.free))
        # "you can still create a vm with 1.5 GHz" at ratio 3, and no more
        self.assertTrue(cap.fits(1.5 * GHZ))
        self.assertFalse(cap.fits(1.5 * GHZ + 1))

    def test_guaranteed_share_under_contention_is_the_physical_host(self):
        vms = [(512, 1), (512, 1), (GHZ, 2), (GHZ, 2)]
        self.assertEqual(HOST, sum(amount / ratio for amount, ratio in vms))


class RamOvercommitCaveatExample(unittest.TestCase):
    """Overcommit 2 on 2 GB, three 1 GB VMs, then the ratio lowered to 1."""

    GB = 1024

    def test_at_ratio_2(self):
        cap = accounting.capacity_of_instances(2 * self.GB, 2, [(self.GB, 2)] * 3)
        self.assertEqual((4 * self.GB, 3 * self.GB, 1 * self.GB),
                         (cap.total, cap.used, cap.free))
        self.assertEqual(75.0, cap.percent)
        self.assertFalse(cap.exceeded)

    def test_lowered_to_1_goes_over_100_percent_and_blocks(self):
        cap = accounting.capacity_of_instances(2 * self.GB, 1, [(self.GB, 2)] * 3)
        self.assertEqual((2 * self.GB, 3 * self.GB, -1 * self.GB),
                         (cap.total, cap.used, cap.free))
        self.assertEqual(150.0, cap.percent)
        self.assertTrue(cap.exceeded)
        self.assertFalse(cap.fits(0))  # not even a 0 MB flavor


class CapacityFromNominalUsage(unittest.TestCase):
    """What the filters do: nova's flavor-sized usage plus recorded scaling."""

    def test_matches_per_instance_accounting(self):
        vms = [(512, 3), (512, 1), (GHZ, 3), (GHZ, 2)]
        nominal = sum(amount for amount, _ in vms)
        recorded = {1: 512, 2: GHZ, 3: 512 + GHZ}
        self.assertEqual(accounting.capacity_of_instances(HOST, 3, vms),
                         accounting.capacity(HOST, 3, nominal, recorded))

    def test_unrecorded_instances_count_at_flavor_size(self):
        cap = accounting.capacity(2, 2.0, nominal_used=3, amount_by_deployed_ratio={1.0: 1})
        # recorded 1 vCPU at ratio 1 counts 2; the 2 unrecorded count 1 each
        self.assertEqual(4, cap.used)

    def test_zero_physical_capacity(self):
        self.assertEqual(0.0, accounting.capacity(0, 2.0, 0).percent)
        self.assertTrue(math.isinf(accounting.capacity(0, 2.0, 1).percent))

    @given(st.lists(st.tuples(st.integers(0, 64), st.sampled_from([0.5, 1, 1.5, 2, 4, 16])),
                    max_size=20),
           st.sampled_from([0.5, 1, 1.5, 2, 4, 16]))
    def test_instance_never_counts_less_than_its_flavor(self, vms, ratio):
        cap = accounting.capacity_of_instances(64, ratio, vms)
        self.assertGreaterEqual(cap.used, sum(amount for amount, _ in vms))


class ParseRatio(unittest.TestCase):

    def test_valid(self):
        self.assertEqual(1.5, accounting.parse_ratio('1.5'))
        self.assertEqual(0.9, accounting.parse_ratio(' 0.9 '))
        self.assertEqual(100.0, accounting.parse_ratio('100'))

    def test_invalid(self):
        for raw in ('abc', '-1', '0', '1e9', '', 'nan', 'inf', '100.01', None):
            self.assertIsNone(accounting.parse_ratio(raw), raw)
