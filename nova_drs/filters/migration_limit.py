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

"""Keep a move off hosts already receiving max_migrations_per_destination.

nova file:line references are to nova 34.0.0 (constraints.txt); what they
show is pinned by tests/unit/tree/test_nova_internals.py.
"""

from nova.scheduler import filters
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.scheduling import migrations as nova_migrations
from nova_drs.scheduling import request_cache

LOG = logging.getLogger(__name__)
CONF = drs_conf.CONF


def may_be_a_move(spec_obj):
    """False for a request that cannot be a move (a boot): no query then.

    nova sets ``ignore_hosts`` (the source) for a live migration
    (conductor/tasks/live_migrate.py:535-542), a cold migration or resize off
    its host (compute/api.py:4421-4427) and an evacuation
    (conductor/manager.py:1309-1312), and ``requested_destination.cell``
    (which "should only be set for move operations",
    scheduler/weights/cross_cell.py:47-49) for every move, a resize allowed
    on its own host included (live_migrate.py:519-524,
    conductor/tasks/migrate.py:167-190, conductor/manager.py:979-1002). A
    boot sets neither (its ``requested_destination`` names at most a host).
    """
    if 'ignore_hosts' in spec_obj and spec_obj.ignore_hosts:
        return True
    destination = (spec_obj.requested_destination
                   if 'requested_destination' in spec_obj else None)
    return bool(destination and 'cell' in destination and destination.cell)


class MigrationLimitFilter(filters.BaseHostFilter):
    """For a move of an existing server, passes hosts receiving fewer than
    ``[loadbalancer] max_migrations_per_destination`` migrations.

    A move is a request whose server has an in-progress migration record:
    nova writes it before it asks the scheduler, for a live migration
    (conductor/manager.py:516-528, ``accepted``, before the task that
    schedules runs at :534), a cold migration or resize
    (conductor/tasks/migrate.py:136-156 called at :280, ``pre-migrating``,
    before ``_schedule`` at :294) and an evacuation (compute/api.py:5752-5758,
    ``accepted``). A boot or an unshelve has none and is never refused.
    Arrivals are in-progress migrations (``scheduling.migrations.IN_PROGRESS``,
    as for MigrationWeigher) whose ``dest_compute`` is the host, the request's own migration left
    out; they are read in one query per cell per request. nova-loadbalancer
    lets nova's scheduler place evacuations, so this filter is what holds
    the limit for them. If the migrations cannot be listed every host passes,
    with one warning: never an obstacle to scheduling.
    """

    RUN_ON_REBUILD = False

    def __init__(self):
        self._arrivals = request_cache.PerRequest(self._read)

    @staticmethod
    def _read(spec_obj):
        """{host: arrivals} for a move, None when nothing is to be refused."""
        instance = spec_obj.instance_uuid if 'instance_uuid' in spec_obj else None
        if instance is None or not may_be_a_move(spec_obj):
            return None
        try:
            records = nova_migrations.in_progress()
        except Exception as exc:
            LOG.warning('MigrationLimitFilter cannot list migrations (%s): '
                        'passing every host', exc)
            return None
        if not any(record.instance_uuid == instance for record in records):
            return None       # no migration of its own: an unshelve
        return nova_migrations.arrivals(records, exclude_instance=instance)

    def host_passes(self, host_state, spec_obj):
        arrivals = self._arrivals.get(spec_obj)
        if arrivals is None:
            return True
        arriving = arrivals.get(host_state.host, 0)
        limit = CONF.loadbalancer.max_migrations_per_destination
        if arriving >= limit:
            LOG.debug('%(host)s: %(n)d migrations already arriving, '
                      '[loadbalancer] max_migrations_per_destination is %(limit)d: '
                      'excluded', {'host': host_state.host, 'n': arriving, 'limit': limit})
            return False
        return True
