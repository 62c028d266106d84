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

"""Helpers of the host lifecycle and evacuation tests: put a host in a DRS
state, run the lifecycle's step for it as one cycle would, read what the
daemon recorded."""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.daemon import cloud_view
from nova_drs.daemon import lifecycle
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.db import models

START = datetime.datetime(2026, 11, 27, 12, 0, 0)
SUSPEND_TIMEOUT, WAKE_TIMEOUT, MIGRATION_TIMEOUT = 600, 900, 300


def in_state(database, host, *path, reason='test'):
    """Create host (active) and walk it through the states of path."""
    drs_hosts.ensure(database, host)
    state = drs_hosts.ACTIVE
    for to_state in path:
        assert drs_hosts.transition(database, host, state, to_state, reason) is not None
        state = to_state


def suspending(database, host='h1', reason='test'):
    in_state(database, host, drs_hosts.SUSPENDING, reason=reason)


def host_lifecycle(nova, database, power, **kwargs):
    return lifecycle.HostLifecycle(nova, database, power, SUSPEND_TIMEOUT, WAKE_TIMEOUT,
                                   MIGRATION_TIMEOUT, **kwargs)


def observed(steps):
    """What Advance.run hands the lifecycle from the cycle's observe: the
    compute nodes of every host nova lists."""
    steps.compute_nodes = cloud_view.compute_nodes_by_host(steps.nova.hypervisors())
    return steps


def step(steps, host='h1'):
    """One cycle's step for host; its record after it."""
    observed(steps).advance(drs_hosts.get(steps.db, host))
    return drs_hosts.get(steps.db, host)


def started(nova, database, power, servers=('vm1',), **fields):
    """The lifecycle of h1 suspending after its first step: ``servers`` put on h1
    first (``fields``: add_server's keywords) were asked to move, an empty host
    was sent its suspend command. The many tests of what happens next go on
    from the same start."""
    suspending(database)
    for uuid in servers:
        nova.add_server(uuid, 'h1', **fields)
    steps = host_lifecycle(nova, database, power)
    step(steps)
    return steps


def past(steps, timeout):
    """h1's record after a step one second past ``timeout`` (seconds on oslo's
    frozen clock), once a step one second before it found h1 still suspending:
    the edge of a suspend's timeouts."""
    timeutils.advance_time_seconds(timeout - 1)
    assert step(steps)['suspend_state'] == drs_hosts.SUSPENDING
    timeutils.advance_time_seconds(2)
    return step(steps)


def requests(database):
    """Every lb_migrations row, oldest first."""
    with database.reader() as session:
        rows = session.scalars(sa.select(models.LbMigration).order_by(models.LbMigration.id))
        return [lb_migrations._as_dict(row) for row in rows]
