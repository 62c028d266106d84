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

"""Inventory writes retry on placement generation conflicts (fake HTTP adapter)."""

import unittest

from nova_drs.overcommit import placement_sync


class Response:
    def __init__(self, status_code, body=None):
        self.status_code = status_code
        self._body = body
        self.text = str(body)

    def json(self):
        return self._body


class FakePlacement:
    """Placement whose provider changes generation ``conflicts`` times under us."""

    def __init__(self, conflicts):
        self.conflicts = conflicts
        self.generation = 1
        self.ratio = 4.0
        self.puts = []

    def get(self, url, microversion=None):
        return Response(200, {'resource_provider_generation': self.generation,
                              'inventories': {'VCPU': {'total': 8, 'allocation_ratio':
                                                       self.ratio}}})

    def put(self, url, json=None, microversion=None):
        self.puts.append(json)
        if self.conflicts:
            self.conflicts -= 1
            self.generation += 1  # someone else wrote meanwhile
            return Response(409, {'errors': ['generation conflict']})
        if json['resource_provider_generation'] != self.generation:
            return Response(409, {'errors': ['stale generation']})
        self.ratio = json['allocation_ratio']
        return Response(200, {})


class SetRatioTest(unittest.TestCase):

    def test_conflicts_are_retried_with_the_new_generation(self):
        placement = FakePlacement(conflicts=2)
        placement_sync._set_ratio(placement, 'rp', 'VCPU', 1.0)
        self.assertEqual(1.0, placement.ratio)
        self.assertEqual([1, 2, 3], [put['resource_provider_generation']
                                     for put in placement.puts])
        self.assertEqual(8, placement.puts[-1]['total'])  # rest of the inventory kept

    def test_gives_up_with_a_clear_error(self):
        placement = FakePlacement(conflicts=placement_sync.MAX_CONFLICT_RETRIES)
        with self.assertRaisesRegex(placement_sync.PlacementError, 'run the sync again'):
            placement_sync._set_ratio(placement, 'rp', 'VCPU', 1.0)
        self.assertEqual(4.0, placement.ratio)
