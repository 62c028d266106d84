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

"""Plans (table ``lb_plans``): the daemon stores each plan and picks approved ones,
the API shows them and decides pending ones; every status change is the one
compare-and-swap ``_swap``.

The daemon stores and reads the decision core's typed actions (``Action``);
their JSON form, which the API shows, is written and parsed here only.
"""

import dataclasses
import json
import logging

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.loadbalancer import model

LOG = logging.getLogger(__name__)

AUTOMATIC, MANUAL = 'automatic', 'manual'
_KINDS = {model.Migrate: 'migrate', model.Suspend: 'suspend', model.Wake: 'wake'}


@dataclasses.dataclass(frozen=True, repr=False)
class Action:
    """One action of a plan: the core's ``Migrate``, ``Suspend`` or ``Wake``,
    with the cluster that planned it and that cluster's automation level."""

    core: object
    cluster: str = None
    automation: str = AUTOMATIC

    @property
    def kind(self):
        return _KINDS[type(self.core)]

    @property
    def reason(self):
        return self.core.reason

    # A migration's fields; None for a suspend or a wake.
    instance = property(lambda self: getattr(self.core, 'instance', None))
    source = property(lambda self: getattr(self.core, 'source', None))
    destination = property(lambda self: getattr(self.core, 'destination', None))
    # A suspend's or a wake's host; None for a migration.
    host = property(lambda self: getattr(self.core, 'host', None))

    def __str__(self):
        if self.kind == 'migrate':
            return 'migrate %s %s -> %s (%s)' % (self.instance, self.source,
                                                 self.destination, self.reason)
        return '%s %s (%s)' % (self.kind, self.host, self.reason)

    def __repr__(self):
        """As the daemon's cycle line logs it: the action, its cluster and automation."""
        return '<%s [%s, %s]>' % (self, self.cluster, self.automation)

    def to_json(self):
        fields = ({'instance': self.instance, 'source': self.source,
                   'destination': self.destination} if self.kind == 'migrate'
                  else {'host': self.host})
        return dict({'type': self.kind}, **fields, reason=self.reason,
                    cluster=self.cluster, automation=self.automation)

    @classmethod
    def from_json(cls, data):
        """The Action ``to_json`` wrote; ValueError for anything else."""
        try:
            if data['type'] == 'migrate':
                core = model.Migrate(data['instance'], data['source'], data['destination'],
                                     data['reason'])
            elif data['type'] in ('suspend', 'wake'):
                kind = model.Suspend if data['type'] == 'suspend' else model.Wake
                core = kind(data['host'], data['reason'])
            else:
                raise ValueError('unknown action type %r' % data['type'])
            return cls(core, data.get('cluster'), data.get('automation', AUTOMATIC))
        except (KeyError, TypeError) as exc:
            raise ValueError('not a plan action: %r (%s)' % (data, exc)) from None


def _loads(text):
    if not text:
        return []
    try:
        return json.loads(text)
    except ValueError:
        # Written by a daemon we do not control: show it rather than fail.
        return [text]


def as_dict(row):
    return {
        'id': row.id, 'cluster': row.cluster, 'created_at': row.created_at,
        'updated_at': row.updated_at, 'mode': row.mode, 'status': row.status,
        'actions': _loads(row.actions), 'reasons': _loads(row.reasons),
        'decided_by': row.decided_by,
    }


def save(database, mode, actions, status, cluster=None):
    """Store a plan of ``Action``s; returns its id."""
    reasons = sorted({action.reason for action in actions})
    with database.writer() as session:
        row = models.LbPlan(cluster=cluster, mode=mode, status=status,
                            actions=json.dumps([action.to_json() for action in actions]),
                            reasons=json.dumps(reasons),
                            created_at=timeutils.utcnow())
        session.add(row)
        session.flush()
        return row.id


def approved(database):
    """Approved plans, oldest first, as (id, [Action]).

    An entry that is not an action (a row written by hand) is logged and
    left out: the rest of the plan still runs.
    """
    with database.reader() as session:
        rows = session.scalars(sa.select(models.LbPlan).filter_by(status='approved')
                               .order_by(models.LbPlan.id))
        return [(row.id, _actions(row.id, row.actions)) for row in rows]


def _actions(plan_id, text):
    actions = []
    for data in _loads(text):
        try:
            actions.append(Action.from_json(data))
        except ValueError as exc:
            LOG.error('plan %s: action left out: %s', plan_id, exc)
    return actions


def _swap(session, plan_id, expected, status, **values):
    """The one compare-and-swap of a plan's status, in the caller's transaction."""
    result = session.execute(sa.update(models.LbPlan)
                             .where(models.LbPlan.id == plan_id,
                                    models.LbPlan.status == expected)
                             .values(status=status, updated_at=timeutils.utcnow(), **values))
    return result.rowcount == 1


def set_status(database, plan_id, status, expected):
    """Compare-and-swap the status of a plan; True when this caller won."""
    with database.writer() as session:
        return _swap(session, plan_id, expected, status)


def decide(database, plan_id, status, decided_by):
    """pending -> ``status`` (compare-and-swap); the plan dict, or None if not pending."""
    with database.writer() as session:
        if not _swap(session, plan_id, 'pending', status, decided_by=decided_by):
            return None
        return as_dict(session.get(models.LbPlan, plan_id))


def latest(database, cluster=None):
    """The newest plan (of ``cluster``) as a dict, or None."""
    query = sa.select(models.LbPlan).order_by(models.LbPlan.id.desc()).limit(1)
    if cluster is not None:
        query = query.filter_by(cluster=cluster)
    with database.reader() as session:
        row = session.scalars(query).first()
        return as_dict(row) if row else None


def get(database, plan_id):
    with database.reader() as session:
        row = session.get(models.LbPlan, plan_id)
        return as_dict(row) if row else None


def count_pending(database):
    """Plans waiting for an administrator's approval (one COUNT)."""
    with database.reader() as session:
        return session.execute(sa.select(sa.func.count()).select_from(
            models.LbPlan).where(models.LbPlan.status == 'pending')).scalar()


def expire_pending(database):
    """A new plan supersedes the pending ones (they were built on an old view)."""
    with database.writer() as session:
        session.execute(sa.update(models.LbPlan).filter_by(status='pending')
                        .values(status='rejected', decided_by='superseded',
                                updated_at=timeutils.utcnow()))
