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

"""Requests the daemon carries out (table ``lb_requests``).

Two kinds share the table, told apart by ``action``:

* admin requests such as ``wake_test``: ``host`` is a compute host, ``result``
  free text the daemon writes when it finishes;
* ``scale_server``: ``host`` holds the server's uuid, not a host (so "one open
  scale per server" is the same uniqueness check as one open wake test per
  host) and ``result`` a JSON document with the request and its progress,
  rewritten at every step so a restarted daemon resumes where it was.

Every status change is the one compare-and-swap ``update``.
"""

import json

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import retention

OPEN = ('pending', 'running')
SCALE_SERVER = 'scale_server'


def as_dict(row):
    return {
        'id': row.id, 'host': row.host, 'action': row.action, 'status': row.status,
        'requested_by': row.requested_by, 'created_at': row.created_at,
        'finished_at': row.finished_at, 'result': row.result,
    }


def _add_unless_open(session, host, action, requested_by, result=None):
    """(row, created?): the open request for (host, action), else a new pending one."""
    table = models.LbRequest
    open_row = session.scalars(
        sa.select(table).filter_by(host=host, action=action)
        .where(table.status.in_(OPEN))).first()
    if open_row is not None:
        return open_row, False
    row = table(host=host, action=action, status='pending', requested_by=requested_by,
                created_at=timeutils.utcnow(), result=result)
    session.add(row)
    session.flush()
    return row, True


def add(database, host, action, requested_by):
    """Record a request unless one for the same host and action is open.

    Returns (request dict, created?).
    """
    with database.writer() as session:
        row, created = _add_unless_open(session, host, action, requested_by)
        return as_dict(row), created


def open_requests(database, action):
    with database.reader() as session:
        rows = session.scalars(sa.select(models.LbRequest)
                               .filter_by(action=action)
                               .where(models.LbRequest.status.in_(OPEN))
                               .order_by(models.LbRequest.id))
        return [{'id': r.id, 'host': r.host, 'status': r.status, 'result': r.result}
                for r in rows]


def update(database, request_id, expected, status, result):
    """Compare-and-swap a request's status; True when this caller won."""
    values = {'status': status, 'result': result}
    if status in ('done', 'failed'):
        values['finished_at'] = timeutils.utcnow()
    with database.writer() as session:
        outcome = session.execute(sa.update(models.LbRequest)
                                  .where(models.LbRequest.id == request_id,
                                         models.LbRequest.status == expected)
                                  .values(**values))
        return outcome.rowcount == 1


# --- scale_server requests: ``host`` is the server uuid ---------------------

def scale_as_dict(row):
    return {'id': row.id, 'server': row.host, 'action': row.action, 'status': row.status,
            'requested_by': row.requested_by, 'created_at': row.created_at,
            'finished_at': row.finished_at, 'progress': loads_progress(row.result)}


def loads_progress(text):
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {'message': text}
    return value if isinstance(value, dict) else {'message': text}


def add_scale(database, server_id, requested_by, progress):
    """Record a scale request unless the server has one open: (dict, created?)."""
    with database.writer() as session:
        row, created = _add_unless_open(session, server_id, SCALE_SERVER, requested_by,
                                        json.dumps(progress))
        return scale_as_dict(row), created


def get(database, request_id):
    """Any request by id: a scale's view with its progress, another kind's
    (a wake test) with the result the daemon wrote; None when unknown."""
    with database.reader() as session:
        row = session.get(models.LbRequest, request_id)
        if row is None:
            return None
        return scale_as_dict(row) if row.action == SCALE_SERVER else as_dict(row)


def get_scale(database, request_id):
    with database.reader() as session:
        row = session.get(models.LbRequest, request_id)
        return scale_as_dict(row) if row is not None and row.action == SCALE_SERVER else None


def open_scales(database):
    """Open scale requests, oldest first, with their progress document."""
    table = models.LbRequest
    with database.reader() as session:
        rows = session.scalars(sa.select(table).filter_by(action=SCALE_SERVER)
                               .where(table.status.in_(OPEN)).order_by(table.id))
        return [scale_as_dict(row) for row in rows]


def scale_targets(database, server_id):
    """Hosts a running scale of ``server_id`` may land on, or None when none runs."""
    table = models.LbRequest
    with database.reader() as session:
        text = session.scalars(sa.select(table.result)
                               .filter_by(host=server_id, action=SCALE_SERVER, status='running')
                               ).first()
    if text is None:
        return None
    hosts = loads_progress(text).get('targets')
    return set(hosts) if isinstance(hosts, list) else None


def update_scale(database, request, status, progress):
    """Compare-and-swap on the scale request's status; True when this caller won."""
    return update(database, request['id'], request['status'], status, json.dumps(progress))


TABLE = models.LbRequest.__table__


def _purged(cutoff):
    """Requests finished before ``cutoff``; open ones are never purged."""
    return sa.and_(TABLE.c.finished_at < cutoff, TABLE.c.status.not_in(OPEN))


def purgeable(database, cutoff):
    """How many rows ``purge`` would delete (``db purge --dry-run``)."""
    return retention.count(database, TABLE, _purged(cutoff))


def purge(database, cutoff, batch_size, max_batches=None):
    """Delete the requests finished before ``cutoff``; (rows, done?)."""
    return retention.delete_in_batches(database, TABLE, _purged(cutoff), batch_size,
                                       max_batches)
