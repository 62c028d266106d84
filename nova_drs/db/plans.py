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

"""Plans (table ``lb_plans``): the daemon stores each plan and runs approved
ones, the API lists and shows them and decides pending ones; every status
change of a plan is the one compare-and-swap ``_swap``.

A manual plan waits ``pending`` until an administrator approves or rejects it;
each cycle ``offer``s its cluster's plan again, and a plan whose actions
changed ``superseded`` it (a pending plan that did not change keeps its id).
A plan runs ``approved -> executing -> done``, ``done`` once none of its
actions is pending. The progress of each action (claimed, sent, settled) is
a row of its own, written by ``nova_drs.db.plan_progress``; this module calls
it, in the same transaction where a plan and its rows must change together
(saving a plan, purging it), and joins its rows to the plans they belong to
(``runnable``: the actions still pending; ``orphans``: those a previous
leadership term left started, for ``nova_drs.daemon.plan_recovery``).

The daemon stores and reads the decision core's typed actions (``Action``,
``nova_drs.db.plan_entries``).
"""

import collections
import dataclasses
import json

from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import plan_progress
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
    plan_progress.add(session, row.id, range(len(actions)),
                      plan_progress.DONE if status == 'done' else plan_progress.PENDING)
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
    with database.reader() as session:
        rows = session.execute(sa.select(models.LbPlan.id, models.LbPlan.status,
                                         models.LbPlan.actions, models.LbPlan.created_at)
                               .where(models.LbPlan.status.in_(RUNNABLE))
                               .order_by(models.LbPlan.id)).all()
        if not rows:
            return []
        pending, tracked = plan_progress.positions(session, [row.id for row in rows])
    result = []
    for row in rows:
        entries = _loads(row.actions)
        if tracked.get(row.id, 0) < len(entries):
            pending[row.id] |= plan_progress.track(database, row.id, len(entries))
        actions, bad = _actions(row.id, entries, pending[row.id])
        if bad:
            plan_progress.record(database, row.id, bad, plan_progress.SKIPPED,
                                 expected=plan_progress.PENDING)
        result.append((row.id, row.status, actions, row.created_at))
    return result


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


def orphans(database, token):
    """[(plan_id, Action, claimed_at)]: actions of executing or done plans left
    ``started`` by a leadership term other than ``token`` (a daemon that died or
    lost the lead between its claim and nova's answer; a plan whose last
    actions were such is already done). One query, plus one parse per plan."""
    orphaned = plan_progress.orphaned(token).subquery()
    with database.reader() as session:
        rows = session.execute(
            sa.select(orphaned.c.plan_id, orphaned.c.position, orphaned.c.claimed_at,
                      models.LbPlan.actions)
            .join(models.LbPlan, models.LbPlan.id == orphaned.c.plan_id)
            .where(models.LbPlan.status.in_(('executing', 'done')))).all()
    by_plan = collections.defaultdict(dict)
    for plan_id, position, claimed_at, _entries in rows:
        by_plan[plan_id][position] = claimed_at
    entries = {row.plan_id: row.actions for row in rows}
    found = []
    for plan_id, claimed in by_plan.items():
        actions, _bad = _actions(plan_id, _loads(entries[plan_id]), set(claimed))
        found.extend((plan_id, action, claimed[action.position]) for action in actions)
    return found


def finish_if_complete(database, plan_id):
    """executing -> done once none of the plan's actions is pending; True if it moved."""
    with database.writer() as session:
        result = session.execute(sa.update(models.LbPlan)
                                 .where(models.LbPlan.id == plan_id,
                                        models.LbPlan.status == 'executing',
                                        ~plan_progress.any_pending(plan_id))
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
    return as_dict(row, plan_progress.of_plan(session, row.id))


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
    query = sa.select(models.LbPlan.id, models.LbPlan.cluster, models.LbPlan.mode,
                      models.LbPlan.status, models.LbPlan.created_at,
                      models.LbPlan.updated_at, models.LbPlan.decided_by)
    if status is not None:
        query = query.where(models.LbPlan.status == status)
    if cluster is not None:
        query = query.where(models.LbPlan.cluster == cluster)
    with database.reader() as session:
        rows = session.execute(query.order_by(models.LbPlan.id.desc()).limit(limit)).all()
        counts = plan_progress.counts(session, [row.id for row in rows])
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
    with database.writer() as session:
        ids = session.scalars(_finished_before(older_than)).all()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            plan_progress.delete(session, chunk)
            session.execute(sa.delete(models.LbPlan).where(models.LbPlan.id.in_(chunk)))
        return len(ids)
