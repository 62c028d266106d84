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

"""Power readings of the hosts' BMCs (table ``drs_power_readings``).

Written by the daemon's measuring step (one INSERT per cycle for every host
it read), pruned by it in batches (``[drs_energy] reading_retention``);
read by the energy report and the metrics in one grouped query each.
"""

import datetime

import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import retention

TABLE = models.DrsPowerReading.__table__


def save(database, read_at, watts_by_host):
    """Store ``{host: watts}`` read at ``read_at`` with one executemany INSERT."""
    if not watts_by_host:
        return
    with database.writer() as session:
        session.execute(TABLE.insert(), [{'host': host, 'read_at': read_at, 'watts': watts}
                                         for host, watts in sorted(watts_by_host.items())])


def prune(database, now, retention_hours, batch_size=1000):
    """Delete readings older than the retention, ``batch_size`` rows per
    transaction (a backlog never locks the table for long); rows deleted."""
    cutoff = now - datetime.timedelta(hours=retention_hours)
    return purge(database, cutoff, batch_size)[0]


def newest(database, hosts=None):
    """{host: (read_at, watts)} of each host's newest reading (one query)."""
    latest = sa.select(TABLE.c.host, sa.func.max(TABLE.c.read_at).label('read_at'))
    if hosts is not None:
        latest = latest.where(TABLE.c.host.in_(list(hosts)))
    latest = latest.group_by(TABLE.c.host).subquery()
    query = (sa.select(TABLE.c.host, TABLE.c.read_at, TABLE.c.watts)
             .join(latest, sa.and_(TABLE.c.host == latest.c.host,
                                   TABLE.c.read_at == latest.c.read_at)))
    with database.reader() as session:
        return {row.host: (row.read_at, row.watts) for row in session.execute(query)}


def mean_watts(database, since, until, hosts=None):
    """{host: mean watts of its readings in [since, until)} (one grouped query)."""
    query = (sa.select(TABLE.c.host, sa.func.avg(TABLE.c.watts))
             .where(TABLE.c.read_at >= since, TABLE.c.read_at < until))
    if hosts is not None:
        query = query.where(TABLE.c.host.in_(list(hosts)))
    with database.reader() as session:
        return {host: float(mean) for host, mean in session.execute(query.group_by(TABLE.c.host))}


def purgeable(database, cutoff):
    """How many rows ``purge`` would delete (``db purge --dry-run``)."""
    return retention.count(database, TABLE, TABLE.c.read_at < cutoff)


def purge(database, cutoff, batch_size, max_batches=None):
    """Delete the power readings taken before ``cutoff``; (rows, done?)."""
    return retention.delete_in_batches(database, TABLE, TABLE.c.read_at < cutoff, batch_size,
                                       max_batches)
