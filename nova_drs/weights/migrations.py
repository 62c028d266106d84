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

"""Avoid hosts that are already moving instances."""

from nova.scheduler import weights
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.scheduling import migrations as nova_migrations
from nova_drs.scheduling import request_cache
from nova_drs.weights import base

LOG = logging.getLogger(__name__)
CONF = drs_conf.CONF

#: Kept here for callers: the statuses are nova_drs.scheduling.migrations'.
IN_PROGRESS = nova_migrations.IN_PROGRESS


def migrations_per_host():
    """{host: number of in-progress migrations from or to it}, all cells, one query each."""
    return nova_migrations.per_host(nova_migrations.in_progress())


class MigrationWeigher(weights.BaseHostWeigher):
    """Prefers hosts with fewer migrations in progress (as source or destination).

    A host busy sending or receiving instances has its network and memory
    bandwidth taken; new work there slows both. Weight = minus the number of
    in-progress migrations touching the host, read once per request (or
    reused for ``[drs_scheduler] cache_seconds``).
    """

    def __init__(self):
        self._counts = request_cache.PerRequest(
            self._read, max_age=lambda: CONF.drs_scheduler.cache_seconds)
        self._multiplier = base.AggregateMultiplier(
            'drs_migration_weight_multiplier', 'migration_weight_multiplier')

    @staticmethod
    def _read(spec_obj):
        try:
            return migrations_per_host()
        except Exception as exc:
            LOG.warning('MigrationWeigher cannot list migrations (%s): not weighing', exc)
            return {}

    def weight_multiplier(self, host_state):
        return self._multiplier(host_state)

    def weigh_objects(self, weighed_obj_list, spec_obj):
        self._multiplier.reset()
        counts = self._counts.get(spec_obj)
        return [-float(counts.get(weighed.obj.host, 0)) for weighed in weighed_obj_list]

    def _weigh_object(self, host_state, spec_obj):
        return -float(self._counts.get(spec_obj).get(host_state.host, 0))
