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

"""The progress of each action of a stored plan (table ``lb_plan_actions``).

A plan's actions are entries of its stored ``actions`` list
(``nova_drs.db.plans``); each entry has a row of its own here, keyed by the
plan's id and the entry's ``position``, saying how far it got:
``pending -> started -> done | failed`` (or ``skipped``), each step a
compare-and-swap (``record``). The rows exist so that the progress of each
action survives what a plan's run does not: an exception mid-plan, a daemon
restart, a failover to another daemon. Whichever daemon leads next resumes an
``executing`` plan with the actions still ``pending``.

An action is claimed (``started``, the row naming the claiming leader's term)
before nova is asked, so no two daemons send it. One a previous term left
``started`` (it died or lost the lead between its claim and nova's answer) is
``orphaned``; the next leader settles it from nova's records
(``nova_drs.daemon.plan_recovery``): each action is sent exactly once across
daemons.

Functions taking a ``session`` run in the caller's transaction (``plans``
writes a plan and its rows in one); the others open their own. This module
reads and writes the progress rows only: a plan's status and entries are
``nova_drs.db.plans``' (which calls this module, never the reverse).
"""

import collections

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models

PENDING, STARTED, DONE, FAILED, SKIPPED = models.PLAN_ACTION_STATUSES

_TABLE = models.LbPlanAction.__table__


def add(session, plan_id, positions, status=PENDING):
    """Rows in ``status`` for the entries of plan ``plan_id`` at ``positions``
    (one INSERT, none when there are none)."""
    now = timeutils.utcnow()
    rows = [{'plan_id': plan_id, 'position': position, 'status': status,
             'updated_at': now} for position in positions]
    if rows:
        session.execute(sa.insert(models.LbPlanAction), rows)


def track(database, plan_id, size):
    """Pending rows for the entries of a plan (``size`` of them) that have none;
    their positions. For a plan stored before actions had progress rows."""
    with database.writer() as session:
        known = set(session.scalars(sa.select(_TABLE.c.position)
                                    .where(_TABLE.c.plan_id == plan_id)))
        missing = [position for position in range(size) if position not in known]
        add(session, plan_id, missing)
    return set(missing)


def positions(session, plan_ids):
    """({plan id: {positions still pending}}, {plan id: how many rows it has}) of
    ``plan_ids``: two queries."""
    pending = collections.defaultdict(set)
    for plan_id, position in session.execute(
            sa.select(_TABLE.c.plan_id, _TABLE.c.position)
            .where(_TABLE.c.plan_id.in_(plan_ids), _TABLE.c.status == PENDING)):
        pending[plan_id].add(position)
    tracked = dict(session.execute(sa.select(_TABLE.c.plan_id, sa.func.count())
                                   .where(_TABLE.c.plan_id.in_(plan_ids))
                                   .group_by(_TABLE.c.plan_id)).all())
    return pending, tracked


def any_pending(plan_id):
    """The SQL condition "an action of plan ``plan_id`` is still pending", for a
    statement of the caller's (a plan finishes in one UPDATE once it is false)."""
    return sa.exists().where(_TABLE.c.plan_id == plan_id, _TABLE.c.status == PENDING)


def orphaned(token):
    """A SELECT of (plan_id, position, claimed_at) of the actions left ``started``
    by a leadership term other than ``token``, for the caller to join with the
    plans it resumes (``plans.orphans``: one query)."""
    return (sa.select(_TABLE.c.plan_id, _TABLE.c.position,
                      _TABLE.c.updated_at.label('claimed_at'))
            .where(_TABLE.c.status == STARTED,
                   sa.or_(_TABLE.c.detail.is_(None), _TABLE.c.detail != token)))


def claim(database, plan_id, position, token=None):
    """pending -> started, the row's detail naming ``token`` (the claiming leader's
    term): True when this caller may send the action."""
    return bool(record(database, plan_id, [(position, token)], STARTED, expected=PENDING))


def record(database, plan_id, outcomes, status, expected=STARTED):
    """Move the actions of ``outcomes`` ([(position, detail)]) from ``expected`` to
    ``status`` with their detail, in one statement; how many moved."""
    if not outcomes:
        return 0
    statement = (_TABLE.update()
                 .where(_TABLE.c.plan_id == plan_id,
                        _TABLE.c.position == sa.bindparam('b_position'),
                        _TABLE.c.status == expected)
                 .values(status=status, detail=sa.bindparam('b_detail'),
                         updated_at=timeutils.utcnow()))
    with database.writer() as session:
        result = session.execute(statement, [{'b_position': position, 'b_detail': detail}
                                             for position, detail in outcomes])
        return result.rowcount


class Progress:
    """The progress rows of one run of a stored plan, as the orchestrator moves them:
    claims and outcomes of actions sent are written at once, skips in one
    statement at the end of the run (``flush``)."""

    def __init__(self, database, plan_id, token=None):
        self.database = database
        self.plan_id = plan_id
        self.token = token  # the leadership term claims are recorded with
        self._skips = []

    def claim(self, action):
        return claim(self.database, self.plan_id, action.position, self.token)

    def finished(self, action, status, detail=None):
        """started -> ``status`` (done, failed, or skipped after the claim)."""
        record(self.database, self.plan_id, [(action.position, detail)], status)

    def skip(self, action, detail):
        """pending -> skipped, at ``flush``."""
        self._skips.append((action.position, detail))

    def flush(self):
        skips, self._skips = self._skips, []
        record(self.database, self.plan_id, skips, SKIPPED, expected=PENDING)


def of_plan(session, plan_id):
    """{position: (status, detail)} of the actions of plan ``plan_id`` (one SELECT)."""
    return {position: (status, detail) for position, status, detail in session.execute(
        sa.select(_TABLE.c.position, _TABLE.c.status, _TABLE.c.detail)
        .where(_TABLE.c.plan_id == plan_id))}


def counts(session, plan_ids):
    """{plan id: {status: how many of its actions}} of ``plan_ids`` (one SELECT,
    none when there are no ids)."""
    found = collections.defaultdict(dict)
    if plan_ids:
        for plan_id, status, number in session.execute(
                sa.select(_TABLE.c.plan_id, _TABLE.c.status, sa.func.count())
                .where(_TABLE.c.plan_id.in_(plan_ids))
                .group_by(_TABLE.c.plan_id, _TABLE.c.status)):
            found[plan_id][status] = number
    return found


def delete(session, plan_ids):
    """Delete the rows of ``plan_ids`` (one DELETE; the caller deletes the plans)."""
    session.execute(_TABLE.delete().where(_TABLE.c.plan_id.in_(plan_ids)))
