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

"""Plans (tables ``lb_plans`` and ``lb_plan_actions``): the daemon stores each plan
and runs approved ones, the API lists and shows them and decides pending ones;
every status change of a plan is the one compare-and-swap ``_swap``.

A manual plan waits ``pending`` until an administrator approves or rejects it;
each cycle ``offer``s its cluster's plan again, and a plan whose actions
changed ``superseded`` it (a pending plan that did not change keeps its id).
A plan runs ``approved -> executing -> done``; each of its actions has a row
of its own, ``pending -> started -> done | failed`` (or ``skipped``), each
step a compare-and-swap. An action is claimed (``started``) before nova is
asked, recording the claiming leader's term, so whichever daemon leads next
resumes an ``executing`` plan with the actions still pending; an action a
previous term left ``started`` (it died between its claim and nova's answer)
is one of ``orphans``, which the next leader settles from nova's records
(``nova_drs.daemon.plan_recovery``): exactly once across daemons.

The daemon stores and reads the decision core's typed actions (``Action``,
``nova_drs.db.plan_entries``).
"""

import collections
import dataclasses
import json
import logging

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db.plan_entries import Action
from nova_drs.db.plan_entries import AUTOMATIC  # noqa: F401 (plans.AUTOMATIC)
from nova_drs.db.plan_entries import MANUAL  # noqa: F401 (plans.MANUAL)

LOG = logging.getLogger(__name__)

def _loads(text):
    if not text:
        return []
    try:
        return json.loads(text)
    except ValueError:
        # Written by a daemon we do not control: show it rather than fail.
        return [text]


#: Plans whose actions may still run: the daemon that leads picks them up.
RUNNABLE = ('approved', 'executing')
#: A pending plan a later cycle replaced: its cluster's plan changed, or has no
#: manual action any more. Never approved, never run.
SUPERSEDED = 'superseded'
#: Plans that will never change again (what ``purge`` deletes once old).
FINISHED = ('done', 'rejected', SUPERSEDED, 'failed')
#: Every status of a plan.
STATUSES = models.PLAN_STATUSES
TABLE_NAME = models.LbPlan.__tablename__
PENDING, STARTED, DONE, FAILED, SKIPPED = models.PLAN_ACTION_STATUSES


def as_dict(row, progress=None):
    """A plan as the API shows it; ``progress``: {position: (status, detail)} of its
    actions, merged into each action, with the counts per status."""
    actions = _loads(row.actions)
    if progress:
        for position, action in enumerate(actions):
            if isinstance(action, dict) and position in progress:
                action['status'], action['detail'] = progress[position]
    return {
        'id': row.id, 'cluster': row.cluster, 'created_at': row.created_at,
        'updated_at': row.updated_at, 'mode': row.mode, 'status': row.status,
        'actions': actions, 'reasons': _loads(row.reasons), 'decided_by': row.decided_by,
        'progress': dict(collections.Counter(status for status, _ in (progress or {}).values()))}


def save(database, mode, actions, status, cluster=None):
    """Store a plan of ``Action``s with one progress row per action; returns its id.

    The actions of a plan saved ``done`` (what an automatic cycle started)
    are ``done``; any other plan's are ``pending``. Two INSERTs.
    """
    with database.writer() as session:
        return _insert(session, mode, actions, _dumps(actions), status, cluster)


def _dumps(actions):
    """The stored JSON form of ``actions`` (``lb_plans.actions``)."""
    return json.dumps([action.to_json() for action in actions])


def _insert(session, mode, actions, text, status, cluster):
    reasons = sorted({action.reason for action in actions})
    row = models.LbPlan(cluster=cluster, mode=mode, status=status, actions=text,
                        reasons=json.dumps(reasons), created_at=timeutils.utcnow())
    session.add(row)
    session.flush()
    if actions:
        now = timeutils.utcnow()
        action_status = DONE if status == 'done' else PENDING
        session.execute(sa.insert(models.LbPlanAction), [
            {'plan_id': row.id, 'position': position, 'status': action_status,
             'updated_at': now} for position in range(len(actions))])
    return row.id


def offer(database, offered):
    """Store this cycle's manual plans, ``{cluster: [Action] in plan order}``, each
    as its cluster's one pending plan; returns ``{cluster: pending plan id}``.

    A cluster whose pending plan holds the same actions (their stored JSON,
    order included) keeps it: same id, nothing written, so the id an
    administrator just read can still be approved. A changed plan supersedes
    the pending one (compare-and-swap to ``superseded``) and is saved anew; the
    pending plan of a cluster without manual actions this cycle is superseded.
    One transaction: one SELECT of the pending plans, one UPDATE for those
    superseded without a successor, and for each changed cluster an UPDATE
    and two INSERTs.

    Two daemons racing (a failover mid-cycle): the one that loses the swap
    saves nothing for that cluster (the winner already replaced the plan);
    two that both found no pending plan both insert, so after the commit
    each cluster that got a new plan keeps only its newest pending one
    (``_keep_newest``): never two pending plans for a cluster.
    """
    wanted = {cluster: (actions, _dumps(actions))
              for cluster, actions in offered.items() if actions}
    result, created = {}, []
    with database.writer() as session:
        current, stale = _pending(session)
        replaced = {}
        for cluster, (plan_id, text) in current.items():
            if cluster in wanted and wanted[cluster][1] == text:
                result[cluster] = plan_id
            elif cluster in wanted:
                replaced[cluster] = plan_id
            else:
                stale.append(plan_id)
        _supersede(session, stale)
        for cluster, (actions, text) in wanted.items():
            if cluster in result:
                continue
            if cluster in replaced and not _swap(session, replaced[cluster], 'pending',
                                                 SUPERSEDED, decided_by=SUPERSEDED):
                continue  # another daemon decided or replaced it first
            result[cluster] = _insert(session, MANUAL, actions, text, 'pending', cluster)
            created.append(cluster)
    if created:
        result.update(_keep_newest(database, created))
    return result


def _pending(session):
    """({cluster: (id, actions JSON) of its newest pending plan}, [ids of the
    older pending plans of a cluster]): one SELECT."""
    current, older = {}, []
    for plan_id, cluster, text in session.execute(
            sa.select(models.LbPlan.id, models.LbPlan.cluster, models.LbPlan.actions)
            .where(models.LbPlan.status == 'pending').order_by(models.LbPlan.id)):
        if cluster in current:
            older.append(current[cluster][0])
        current[cluster] = (plan_id, text)
    return current, older


def _supersede(session, ids):
    """pending -> superseded for ``ids`` (those no longer pending are left as they are)."""
    if ids:
        session.execute(sa.update(models.LbPlan)
                        .where(models.LbPlan.id.in_(ids), models.LbPlan.status == 'pending')
                        .values(status=SUPERSEDED, decided_by=SUPERSEDED,
                                updated_at=timeutils.utcnow()))


def _keep_newest(database, clusters):
    """Supersede all but the newest pending plan of each of ``clusters``; {cluster:
    the id kept}. Run after the INSERTs committed, by each daemon that inserted:
    the later of two racing daemons sees both plans. One SELECT, at most one UPDATE."""
    named = [cluster for cluster in clusters if cluster is not None]
    where = models.LbPlan.cluster.in_(named)
    if None in clusters:
        where = sa.or_(where, models.LbPlan.cluster.is_(None))
    with database.writer() as session:
        rows = session.execute(sa.select(models.LbPlan.id, models.LbPlan.cluster)
                               .where(models.LbPlan.status == 'pending', where)
                               .order_by(models.LbPlan.id)).all()
        newest = {cluster: plan_id for plan_id, cluster in rows}
        _supersede(session, [plan_id for plan_id, cluster in rows
                             if plan_id != newest[cluster]])
    return newest


def superseded_by(database, plan_id, cluster):
    """The id of the pending plan of ``cluster`` newer than plan ``plan_id`` (the one
    that superseded it, or superseded that one), or None."""
    where = (models.LbPlan.cluster.is_(None) if cluster is None
             else models.LbPlan.cluster == cluster)
    with database.reader() as session:
        return session.execute(sa.select(sa.func.max(models.LbPlan.id))
                               .where(models.LbPlan.status == 'pending', where,
                                      models.LbPlan.id > plan_id)).scalar()


def runnable(database):
    """Approved and executing plans, oldest first, as (id, status, [Action],
    created_at) with only their actions still pending (each with its
    ``position``); ``created_at`` is when the plan was decided. Three queries.

    An entry that is not an action (a row written by hand) is recorded
    ``skipped`` with the reason and left out: the rest of the plan still runs.
    A plan stored before actions had progress rows gets them, pending.
    """
    table = models.LbPlanAction.__table__
    with database.reader() as session:
        rows = session.execute(sa.select(models.LbPlan.id, models.LbPlan.status,
                                         models.LbPlan.actions, models.LbPlan.created_at)
                               .where(models.LbPlan.status.in_(RUNNABLE))
                               .order_by(models.LbPlan.id)).all()
        if not rows:
            return []
        ids = [row.id for row in rows]
        pending = collections.defaultdict(set)
        for plan_id, position in session.execute(
                sa.select(table.c.plan_id, table.c.position)
                .where(table.c.plan_id.in_(ids), table.c.status == PENDING)):
            pending[plan_id].add(position)
        tracked = dict(session.execute(sa.select(table.c.plan_id, sa.func.count())
                                       .where(table.c.plan_id.in_(ids))
                                       .group_by(table.c.plan_id)).all())
    result = []
    for row in rows:
        entries = _loads(row.actions)
        if tracked.get(row.id, 0) < len(entries):
            pending[row.id] |= _track(database, row.id, len(entries))
        actions, bad = _actions(row.id, entries, pending[row.id])
        if bad:
            record(database, row.id, bad, SKIPPED, expected=PENDING)
        result.append((row.id, row.status, actions, row.created_at))
    return result


def _track(database, plan_id, size):
    """Pending progress rows for the entries of a plan that have none; their positions."""
    table = models.LbPlanAction.__table__
    with database.writer() as session:
        known = set(session.scalars(sa.select(table.c.position)
                                    .where(table.c.plan_id == plan_id)))
        missing = [position for position in range(size) if position not in known]
        if missing:
            session.execute(sa.insert(models.LbPlanAction), [
                {'plan_id': plan_id, 'position': position, 'status': PENDING,
                 'updated_at': timeutils.utcnow()} for position in missing])
    return set(missing)


def approved(database):
    """Plans whose actions may still run, as (id, [pending Action])."""
    return [(plan_id, actions) for plan_id, _, actions, _ in runnable(database)]


def _actions(plan_id, entries, positions):
    """(the Actions at ``positions`` of a plan, [(position, why)] of entries that are not)."""
    actions, bad = [], []
    for position, data in enumerate(entries):
        if position not in positions:
            continue
        try:
            actions.append(dataclasses.replace(Action.from_json(data), position=position))
        except ValueError as exc:
            LOG.error('plan %s: action left out: %s', plan_id, exc)
            bad.append((position, str(exc)))
    return actions, bad


def claim(database, plan_id, position, token=None):
    """pending -> started, the row's detail naming ``token`` (the claiming leader's
    term): True when this caller may send the action."""
    return bool(record(database, plan_id, [(position, token)], STARTED, expected=PENDING))


def orphans(database, token):
    """[(plan_id, Action, claimed_at)]: actions of executing or done plans left
    ``started`` by a leadership term other than ``token`` (a daemon that died or
    lost the lead between its claim and nova's answer; a plan whose last
    actions were such is already done). One query, plus one parse per plan."""
    table = models.LbPlanAction.__table__
    with database.reader() as session:
        rows = session.execute(
            sa.select(table.c.plan_id, table.c.position, table.c.updated_at,
                      models.LbPlan.actions)
            .join(models.LbPlan, models.LbPlan.id == table.c.plan_id)
            .where(models.LbPlan.status.in_(('executing', 'done')),
                   table.c.status == STARTED,
                   sa.or_(table.c.detail.is_(None), table.c.detail != token))).all()
    by_plan = collections.defaultdict(dict)
    for plan_id, position, claimed_at, _entries in rows:
        by_plan[plan_id][position] = claimed_at
    entries = {row.plan_id: row.actions for row in rows}
    found = []
    for plan_id, claimed in by_plan.items():
        actions, _bad = _actions(plan_id, _loads(entries[plan_id]), set(claimed))
        found.extend((plan_id, action, claimed[action.position]) for action in actions)
    return found


def record(database, plan_id, outcomes, status, expected=STARTED):
    """Move the actions of ``outcomes`` ([(position, detail)]) from ``expected`` to
    ``status`` with their detail, in one statement; how many moved."""
    if not outcomes:
        return 0
    table = models.LbPlanAction.__table__
    statement = (table.update()
                 .where(table.c.plan_id == plan_id,
                        table.c.position == sa.bindparam('b_position'),
                        table.c.status == expected)
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


def finish_if_complete(database, plan_id):
    """executing -> done once none of the plan's actions is pending; True if it moved."""
    table = models.LbPlanAction.__table__
    still_pending = sa.exists().where(table.c.plan_id == plan_id, table.c.status == PENDING)
    with database.writer() as session:
        result = session.execute(sa.update(models.LbPlan)
                                 .where(models.LbPlan.id == plan_id,
                                        models.LbPlan.status == 'executing',
                                        ~still_pending)
                                 .values(status='done', updated_at=timeutils.utcnow()))
        return result.rowcount == 1


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
        return _with_progress(session, session.get(models.LbPlan, plan_id))


def _with_progress(session, row):
    table = models.LbPlanAction.__table__
    progress = {position: (status, detail) for position, status, detail in session.execute(
        sa.select(table.c.position, table.c.status, table.c.detail)
        .where(table.c.plan_id == row.id))}
    return as_dict(row, progress)


def latest(database, cluster=None):
    """The newest plan (of ``cluster``) as a dict with its actions' progress, or None."""
    query = sa.select(models.LbPlan).order_by(models.LbPlan.id.desc()).limit(1)
    if cluster is not None:
        query = query.filter_by(cluster=cluster)
    with database.reader() as session:
        row = session.scalars(query).first()
        return _with_progress(session, row) if row else None


def get(database, plan_id):
    """One plan as a dict with its actions' progress, or None."""
    with database.reader() as session:
        row = session.get(models.LbPlan, plan_id)
        return _with_progress(session, row) if row else None


def list_plans(database, status=None, cluster=None, limit=100):
    """The newest ``limit`` plans (of ``status`` / ``cluster``), newest first, without
    their actions: id, cluster, mode, status, times, and actions per status."""
    table = models.LbPlanAction.__table__
    query = sa.select(models.LbPlan.id, models.LbPlan.cluster, models.LbPlan.mode,
                      models.LbPlan.status, models.LbPlan.created_at,
                      models.LbPlan.updated_at, models.LbPlan.decided_by)
    if status is not None:
        query = query.where(models.LbPlan.status == status)
    if cluster is not None:
        query = query.where(models.LbPlan.cluster == cluster)
    with database.reader() as session:
        rows = session.execute(query.order_by(models.LbPlan.id.desc()).limit(limit)).all()
        counts = collections.defaultdict(dict)
        if rows:
            for plan_id, action_status, number in session.execute(
                    sa.select(table.c.plan_id, table.c.status, sa.func.count())
                    .where(table.c.plan_id.in_([row.id for row in rows]))
                    .group_by(table.c.plan_id, table.c.status)):
                counts[plan_id][action_status] = number
    return [dict(row._asdict(), actions=sum(counts[row.id].values()),
                 progress=counts[row.id]) for row in rows]


def count_pending(database):
    """Plans waiting for an administrator's approval (one COUNT)."""
    with database.reader() as session:
        return session.execute(sa.select(sa.func.count()).select_from(
            models.LbPlan).where(models.LbPlan.status == 'pending')).scalar()


def _finished_before(older_than):
    changed = sa.func.coalesce(models.LbPlan.updated_at, models.LbPlan.created_at)
    return sa.select(models.LbPlan.id).where(models.LbPlan.status.in_(FINISHED),
                                             changed < older_than)


def purgeable(database, older_than):
    """How many plans ``purge`` would delete (``db purge --dry-run``)."""
    with database.reader() as session:
        return session.execute(sa.select(sa.func.count()).select_from(
            _finished_before(older_than).subquery())).scalar()


def purge(database, older_than):
    """Delete finished plans (done, rejected, superseded, failed) last changed before
    ``older_than`` (naive UTC), with their action rows; returns how many plans went.

    Pending, approved and executing plans are never purged. Two DELETEs per 500 plans.
    """
    table = models.LbPlanAction.__table__
    with database.writer() as session:
        ids = session.scalars(_finished_before(older_than)).all()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            session.execute(table.delete().where(table.c.plan_id.in_(chunk)))
            session.execute(sa.delete(models.LbPlan).where(models.LbPlan.id.in_(chunk)))
        return len(ids)
