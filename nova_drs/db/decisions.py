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

"""Decisions of each cycle (table ``lb_decisions``), read by ``drs explain``.

One row per (cycle, subject): a host's load against the thresholds and its
verdict, a server's move or what held it. Written in one INSERT per cycle,
pruned every cycle in batches (``[loadbalancer] decision_retention``).
"""

import datetime
import json

import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import retention

TABLE = models.LbDecision.__table__
HOST = 'host'
SERVER = 'server'


def row(cycle_at, kind, subject, verdict, reason, refusal=None, refused=()):
    """A row to ``save``; ``refused``: ((candidate host, refusal), ...)."""
    return {'cycle_at': cycle_at, 'subject_type': kind, 'subject': subject[:255],
            'verdict': verdict, 'refusal': refusal, 'reason': reason,
            'refused': json.dumps([list(pair) for pair in refused]) if refused else None}


def save(database, rows):
    """Store a cycle's rows with a single executemany INSERT."""
    if not rows:
        return
    with database.writer() as session:
        session.execute(TABLE.insert(), rows)


def prune(database, now, retention_hours, batch_size=1000):
    """Delete decisions older than the retention, ``batch_size`` rows per
    transaction (a backlog never locks the table for long); rows deleted."""
    cutoff = now - datetime.timedelta(hours=retention_hours)
    return purge(database, cutoff, batch_size)[0]


def explain(database, kind, subject, cycles):
    """The subject's decisions in the newest ``cycles`` cycles, newest first.

    A cycle is one ``cycle_at``; the subject may have no row in a cycle
    (a server that stayed put), so the cycles are counted over all subjects.
    """
    oldest = (sa.select(TABLE.c.cycle_at).distinct().order_by(TABLE.c.cycle_at.desc())
              .limit(1).offset(cycles - 1))
    with database.reader() as session:
        since = session.execute(oldest).scalar()
        query = sa.select(TABLE).where(TABLE.c.subject_type == kind, TABLE.c.subject == subject)
        if since is not None:  # fewer cycles stored than asked: all of them
            query = query.where(TABLE.c.cycle_at >= since)
        rows = session.execute(query.order_by(TABLE.c.cycle_at.desc(), TABLE.c.id))
        return [_as_dict(r) for r in rows]


def _as_dict(record):
    data = dict(record._mapping)
    data.pop('id')
    data['refused'] = [{'host': h, 'refusal': r} for h, r in json.loads(data['refused'] or '[]')]
    return data


def purgeable(database, cutoff):
    """How many rows ``purge`` would delete (``db purge --dry-run``)."""
    return retention.count(database, TABLE, TABLE.c.cycle_at < cutoff)


def purge(database, cutoff, batch_size, max_batches=None):
    """Delete the decisions of cycles before ``cutoff``; (rows, done?)."""
    return retention.delete_in_batches(database, TABLE, TABLE.c.cycle_at < cutoff, batch_size,
                                       max_batches)
