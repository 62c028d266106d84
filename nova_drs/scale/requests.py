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

"""``lb_requests`` rows of action ``scale_server``.

``host`` holds the server's uuid (so "one open scale per server" is the same
uniqueness check as one open wake test per host) and ``result`` a JSON
document with the request and its progress, rewritten at every step so a
restarted daemon resumes where it was.
"""

import json

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import requests as db_requests

ACTION = 'scale_server'
OPEN = ('pending', 'running')



def as_dict(row):
    return {'id': row.id, 'server': row.host, 'action': row.action, 'status': row.status,
            'requested_by': row.requested_by, 'created_at': row.created_at,
            'finished_at': row.finished_at, 'progress': loads(row.result)}


def loads(text):
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {'message': text}
    return value if isinstance(value, dict) else {'message': text}


def add(database, server_id, requested_by, progress):
    """Record a scale request unless the server has one open: (dict, created?)."""
    table = models.LbRequest
    with database.writer() as session:
        open_row = session.scalars(
            sa.select(table).filter_by(host=server_id, action=ACTION)
            .where(table.status.in_(OPEN))).first()
        if open_row is not None:
            return as_dict(open_row), False
        row = table(host=server_id, action=ACTION, status='pending',
                    requested_by=requested_by, created_at=timeutils.utcnow(),
                    result=json.dumps(progress))
        session.add(row)
        session.flush()
        return as_dict(row), True


def get(database, request_id):
    with database.reader() as session:
        row = session.get(models.LbRequest, request_id)
        return as_dict(row) if row is not None and row.action == ACTION else None


def open_requests(database):
    """Open scale requests, oldest first, with their progress document."""
    table = models.LbRequest
    with database.reader() as session:
        rows = session.scalars(sa.select(table).filter_by(action=ACTION)
                               .where(table.status.in_(OPEN)).order_by(table.id))
        return [as_dict(row) for row in rows]


def targets(database, server_id):
    """Hosts a running scale of ``server_id`` may land on, or None when none runs."""
    table = models.LbRequest
    with database.reader() as session:
        text = session.scalars(sa.select(table.result)
                               .filter_by(host=server_id, action=ACTION, status='running')
                               ).first()
    if text is None:
        return None
    hosts = loads(text).get('targets')
    return set(hosts) if isinstance(hosts, list) else None


def update(database, request, status, progress):
    """Compare-and-swap on the request's status; True when this caller won."""
    return db_requests.update(database, request['id'], request['status'], status,
                              json.dumps(progress))
