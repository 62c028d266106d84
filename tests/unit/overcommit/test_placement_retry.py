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
"""Inventory writes retry on placement generation conflicts, and give up clearly.

The conflict-then-success path runs on real placement in
tests/functional/test_scheduler_overcommit.py; a placement that conflicts on
every write cannot be provoked there, so this stands in for it.
"""

import unittest

from openstack import exceptions as sdk_exc
from openstack.placement.v1 import resource_provider_inventory as inventory_mod

from nova_drs import exception
from nova_drs.overcommit import placement_sync


class FakePlacement:
    """The two SDK calls the sync makes; the provider changes generation
    ``conflicts`` times under us."""

    def __init__(self, conflicts):
        self.conflicts = conflicts
        self.generation = 1
        self.ratio = 4.0
        self.writes = []

    def resource_provider_inventories(self, provider):
        return [inventory_mod.ResourceProviderInventory.existing(
            resource_class='VCPU', resource_provider_generation=self.generation, total=8,
            reserved=0, min_unit=1, max_unit=8, step_size=1, allocation_ratio=self.ratio)]

    def update_resource_provider_inventory(self, resource_class, provider,
                                           resource_provider_generation=None, **fields):
        self.writes.append(dict(fields, generation=resource_provider_generation))
        if self.conflicts:
            self.conflicts -= 1
            self.generation += 1  # someone else wrote meanwhile
            raise sdk_exc.ConflictException('generation conflict')
        self.ratio = fields['allocation_ratio']


class SetRatioTest(unittest.TestCase):

    def test_conflicts_are_retried_with_the_new_generation(self):
        placement = FakePlacement(conflicts=2)
        placement_sync._set_ratio(placement, 'rp', 'VCPU', 1.0)
        self.assertEqual(1.0, placement.ratio)
        self.assertEqual([1, 2, 3], [write['generation'] for write in placement.writes])
        self.assertEqual(8, placement.writes[-1]['total'])  # rest of the inventory kept

    def test_gives_up_with_a_clear_error(self):
        placement = FakePlacement(conflicts=placement_sync.MAX_CONFLICT_RETRIES)
        with self.assertRaisesRegex(exception.PlacementError, 'run the sync again'):
            placement_sync._set_ratio(placement, 'rp', 'VCPU', 1.0)
        self.assertEqual(4.0, placement.ratio)
