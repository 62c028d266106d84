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

"""The per-request view the overcommit filters and the DRS weighers share."""

from nova import objects

from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api
from nova_drs.db import overcommit as db_overcommit
from nova_drs.scheduling import request_view
from tests.unit.weights.test_weighers import aggregate
from tests.unit.weights.test_weighers import host_state
from tests.unit.weights.test_weighers import WeigherTestCase


class CachedUsageTest(WeigherTestCase):

    def _spec(self):
        return objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=64))

    def test_ratio_change_forces_a_fresh_read_of_cached_usage(self):
        self.conf.config(cache_seconds=300, group='drs_scheduler')
        database = db_api.shared_database(drs_conf.CONF)
        at_1 = [aggregate(30, cpu_allocation_ratio='1.0')]
        at_2 = [aggregate(30, cpu_allocation_ratio='2.0')]
        view = request_view.request_view(self._spec())
        self.assertEqual(1.0, view.cpu(host_state('hc', vcpus_used=1, aggregates=at_1)).used)
        db_overcommit.record(database, 'uuid-c', 'hc', 1, 64, 1.0, 1.0, 'test')

        # same ratio: the cached (older) usage is reused, the instance counts 1
        view = request_view.request_view(self._spec())
        self.assertEqual(1.0, view.cpu(host_state('hc', vcpus_used=1, aggregates=at_1)).used)
        # ratio 1 -> 2: re-read, the instance deployed at 1 counts 2
        view = request_view.request_view(self._spec())
        self.assertEqual(2.0, view.cpu(host_state('hc', vcpus_used=1, aggregates=at_2)).used)
