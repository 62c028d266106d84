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

"""Per-cycle inventories (table ``drs_cycle_inventory``) for what-if replay.

The daemon writes what each real cycle planned from, minus the CPU
histories that the statistics tables already hold; ``nova-drs-sim
--from-stats`` joins both again. Purged with the statistics, and in batches
by the daemon's history purge (``nova_drs.db.retention``).
"""

import json
import zlib

import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import retention

TABLE = models.DrsCycleInventory.__table__


def record(database, taken_at, body):
    """Store one cycle's inventory (a JSON-able dict)."""
    data = zlib.compress(json.dumps(body, separators=(',', ':')).encode('utf-8'))
    with database.writer() as session:
        session.execute(TABLE.insert().values(taken_at=taken_at, body=data))


def since(database, start):
    """[(taken_at, body)] of the cycles from ``start`` on, oldest first."""
    query = sa.select(TABLE.c.taken_at, TABLE.c.body).where(
        TABLE.c.taken_at >= start).order_by(TABLE.c.taken_at, TABLE.c.id)
    with database.reader() as session:
        return [(taken_at, json.loads(zlib.decompress(body)))
                for taken_at, body in session.execute(query)]


def purge_in(session, before):
    """Delete inventories taken before ``before`` in the caller's transaction."""
    return session.execute(TABLE.delete().where(TABLE.c.taken_at < before)).rowcount


def purgeable(database, cutoff):
    """How many rows ``purge`` would delete (``db purge --dry-run``)."""
    return retention.count(database, TABLE, TABLE.c.taken_at < cutoff)


def purge(database, cutoff, batch_size, max_batches=None):
    """Delete the cycle inventories taken before ``cutoff``; (rows, done?)."""
    return retention.delete_in_batches(database, TABLE, TABLE.c.taken_at < cutoff, batch_size,
                                       max_batches)
