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

"""Host DRS state: reads and compare-and-swap transitions.

Every write is ``UPDATE ... WHERE host = ? AND suspend_state IN (expected)``;
a transition that lost a race changes nothing and returns None instead of
raising, so the API and any number of daemons can never overwrite each
other's decisions (the 2015 implementation's read-check-write race).
"""

import json

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs import exception
from nova_drs.db import models
from nova_drs.db import state_history

# The state words are the decision core's (one definition, in its model).
from nova_drs.loadbalancer.model import ACTIVE
from nova_drs.loadbalancer.model import ENTERING_MAINTENANCE
from nova_drs.loadbalancer.model import ERROR
from nova_drs.loadbalancer.model import MAINTENANCE
from nova_drs.loadbalancer.model import SUSPENDED
from nova_drs.loadbalancer.model import SUSPENDING
from nova_drs.loadbalancer.model import WAKING

TABLE = models.DrsHost.__table__

#: Legal transitions: from-state -> allowed to-states.
TRANSITIONS = {
    ACTIVE: {SUSPENDING, ENTERING_MAINTENANCE},
    SUSPENDING: {SUSPENDED, ACTIVE, ERROR},
    SUSPENDED: {WAKING},
    WAKING: {ACTIVE, ERROR},
    ERROR: {ACTIVE, WAKING},
    ENTERING_MAINTENANCE: {MAINTENANCE, ACTIVE, ERROR},
    MAINTENANCE: {ACTIVE},
}


#: A record's fields ``as_dict`` shows (no power options: they may hold secrets).
FIELDS = ('host', 'hypervisor_hostname', 'suspend_state', 'state_reason', 'state_changed_at',
          'state_version', 'mac_to_wake', 'power_driver', 'power_mode', 'wake_failed',
          'disabled_by_drs', 'power_requested_at')
PUBLIC_FIELDS = ('suspend_state', 'state_reason', 'state_changed_at', 'mac_to_wake',
                 'power_driver', 'power_mode', 'wake_failed')


def as_dict(row):
    return {name: getattr(row, name) for name in FIELDS}


def get(database, host):
    """The host's record as a dict, or None when nova-drs never saw it."""
    with database.reader() as session:
        row = session.scalars(sa.select(models.DrsHost).filter_by(host=host)).first()
        return as_dict(row) if row else None


def list_all(database):
    with database.reader() as session:
        rows = session.scalars(sa.select(models.DrsHost).order_by(models.DrsHost.host))
        return [as_dict(row) for row in rows]


def states(database):
    """{host: suspend_state} for every known host, in one query."""
    with database.reader() as session:
        return dict(session.execute(sa.select(TABLE.c.host, TABLE.c.suspend_state)).all())


def created_at(database):
    """{host: when nova-drs first recorded it}, in one query (energy accounting
    must not price a host for time before it existed)."""
    with database.reader() as session:
        return dict(session.execute(
            sa.select(models.DrsHost.host, models.DrsHost.created_at)).all())


def public_records(database, host=None):
    """{host: the API's public view of its record (no power options)}."""
    query = sa.select(models.DrsHost)
    if host is not None:
        query = query.filter_by(host=host)
    with database.reader() as session:
        return {row.host: _public(row) for row in session.scalars(query)}


def _public(row):
    return {name: getattr(row, name) for name in PUBLIC_FIELDS}


def non_active_states(database):
    """{host: state} of hosts that are not active, in one query (absent = active)."""
    with database.reader() as session:
        return dict(session.execute(sa.select(TABLE.c.host, TABLE.c.suspend_state)
                                    .where(TABLE.c.suspend_state != ACTIVE)).all())


def states_and_wake_failed(database):
    """[(host, suspend_state, wake_failed)] of every known host, in one query."""
    with database.reader() as session:
        return session.execute(sa.select(TABLE.c.host, TABLE.c.suspend_state,
                                         TABLE.c.wake_failed)).all()


def active_hosts(session):
    """Names of the active hosts, in the caller's transaction."""
    return session.execute(sa.select(models.DrsHost.host).where(
        models.DrsHost.suspend_state == ACTIVE)).scalars().all()


def in_states(states):
    """SELECT of the names of hosts in one of ``states``, for a subquery of another
    entity's query (it never runs alone)."""
    return sa.select(TABLE.c.host).where(TABLE.c.suspend_state.in_(states))


def new_record(host):
    """The record ``ensure`` would create, for views that must not write (dry run)."""
    return {'host': host, 'hypervisor_hostname': None, 'suspend_state': ACTIVE,
            'state_reason': None, 'state_changed_at': None, 'state_version': 0,
            'mac_to_wake': None, 'power_driver': None, 'power_mode': None,
            'wake_failed': False, 'disabled_by_drs': False, 'power_requested_at': None,
            'power_settings': (None, None, {}, None)}


def list_with_power(database, busy_only=False, active_with=None):
    """Host records plus their ``power_settings`` tuple, in one Core query.

    ``busy_only``: only hosts in a power transition or disabled by nova-drs
    (what the host lifecycle advances); ``active_with``: only active hosts
    whose power driver is one of these names. The records hold secrets (power
    options): for the daemon's power drivers only, never for an API response.
    """
    query = sa.select(TABLE).order_by(TABLE.c.host)
    if active_with is not None:
        query = query.where(TABLE.c.suspend_state == ACTIVE,
                            TABLE.c.power_driver.in_(list(active_with)))
    if busy_only:
        query = query.where(sa.or_(TABLE.c.suspend_state.in_(
                                       (SUSPENDING, WAKING, ENTERING_MAINTENANCE)),
                                   TABLE.c.disabled_by_drs == sa.true()))
    with database.reader() as session:
        rows = session.execute(query).all()
    return [dict(as_dict(row), power_settings=_power_tuple(row)) for row in rows]


def ensure_many(database, hosts):
    """Create records (state active) for every host of ``hosts`` not known yet.

    One SELECT and one INSERT whatever the number of hosts; a host another
    process inserted meanwhile makes the whole batch fall back to ``ensure``.
    Returns the hosts inserted.
    """
    with database.reader() as session:
        known = set(session.scalars(sa.select(TABLE.c.host).where(TABLE.c.host.in_(hosts)))
                    if len(hosts) <= 500 else session.scalars(sa.select(TABLE.c.host)))
    missing = sorted(set(hosts) - known)
    if not missing:
        return []
    rows = [{'host': host, 'suspend_state': ACTIVE, 'state_version': 0,
             'wake_failed': False, 'disabled_by_drs': False,
             'created_at': timeutils.utcnow()} for host in missing]
    try:
        with database.writer() as session:
            session.execute(TABLE.insert(), rows)
    except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
        return [host for host in missing if ensure(database, host)]
    return missing


def ensure(database, host, hypervisor_hostname=None):
    """Create the host's record in state active if it does not exist yet.

    Returns True when this call created it; a concurrent creation (the
    unique host constraint) counts as already there.
    """
    try:
        with database.writer() as session:
            exists = session.scalars(
                sa.select(models.DrsHost.id).filter_by(host=host)).first()
            if exists is None:
                session.add(models.DrsHost(
                    host=host, hypervisor_hostname=hypervisor_hostname,
                    suspend_state=ACTIVE, state_version=0, wake_failed=False,
                    disabled_by_drs=False))
                return True
            if hypervisor_hostname:
                session.execute(sa.update(models.DrsHost).filter_by(host=host).values(
                    hypervisor_hostname=hypervisor_hostname))
            return False
    except db_exc.DBDuplicateEntry:
        return False


def transition(database, host, from_states, to_state, reason):
    """Move ``host`` from one of ``from_states`` to ``to_state`` atomically.

    Returns the new state_version, or None when the host was not in any of
    ``from_states`` (someone else moved it first, or it is unknown).
    """
    if isinstance(from_states, str):
        from_states = (from_states,)
    for state in from_states:
        if to_state not in TRANSITIONS.get(state, ()):
            raise exception.IllegalTransition('%s -> %s is not a legal transition'
                                              % (state, to_state))
    conditions = [TABLE.c.host == host, TABLE.c.suspend_state.in_(from_states)]
    if to_state == ACTIVE and SUSPENDING in from_states:
        # Once the power command left, a suspend can only end suspended or
        # in error: never call a host active while it may be going down.
        conditions.append(TABLE.c.power_requested_at.is_(None))
    with database.writer() as session:
        result = session.execute(
            TABLE.update()
            .where(*conditions)
            .values(suspend_state=to_state, state_reason=reason,
                    state_changed_at=timeutils.utcnow(), power_requested_at=None,
                    state_version=TABLE.c.state_version + 1))
        if result.rowcount != 1:
            return None
        state_history.record(session, host, to_state, reason, timeutils.utcnow())
        return session.execute(
            sa.select(TABLE.c.state_version).where(TABLE.c.host == host)).scalar_one()


def set_fields(database, host, **fields):
    """Update non-state fields (mac_to_wake, power settings, wake_failed)."""
    forbidden = {'suspend_state', 'state_version'} & set(fields)
    if forbidden:
        raise ValueError('use transition() to change %s' % ', '.join(sorted(forbidden)))
    with database.writer() as session:
        result = session.execute(
            sa.update(models.DrsHost).filter_by(host=host).values(**fields))
        return result.rowcount == 1


def power_settings(database, host):
    """(driver, mode, options dict, mac) for the power drivers; secrets sealed."""
    with database.reader() as session:
        row = session.scalars(sa.select(models.DrsHost).filter_by(host=host)).first()
        if row is None:
            return None, None, {}, None
        return _power_tuple(row)


def stored_power_options(database, after=None, limit=1000):
    """[(host, power_driver, power_options text)] of hosts with power options, by
    host, ``limit`` from after host ``after``: what sealing and rotation rewrite."""
    query = (sa.select(TABLE.c.host, TABLE.c.power_driver, TABLE.c.power_options)
             .where(TABLE.c.power_options.is_not(None), TABLE.c.power_options != '')
             .order_by(TABLE.c.host).limit(limit))
    if after is not None:
        query = query.where(TABLE.c.host > after)
    with database.reader() as session:
        return [tuple(row) for row in session.execute(query)]


def replace_power_options(database, host, old_text, new_text):
    """Write ``new_text`` as ``host``'s power options only if they still are ``old_text``
    (an admin who set them meanwhile wins); True when written."""
    with database.writer() as session:
        return session.execute(
            TABLE.update().where(TABLE.c.host == host, TABLE.c.power_options == old_text)
            .values(power_options=new_text)).rowcount == 1


def _power_tuple(row):
    return (row.power_driver, row.power_mode, json.loads(row.power_options or '{}'),
            row.mac_to_wake)


def suspend_within_floor(database, host, members, floor, reason):
    """``active -> suspending`` unless fewer than ``floor`` of ``members`` would stay active.

    Returns (new state_version or None, active members before the request).
    The transaction starts by writing the members' rows (a no-op update), so
    every database locks them before the count: a concurrent suspend in the
    same cluster waits for this one to commit and then counts its result
    (row locks on MySQL and PostgreSQL; SQLite's single writer lock, taken
    before any read so its busy timeout applies). Hosts already suspending,
    suspended or in maintenance do not count as active.
    """
    members = sorted(set(members) | {host})
    in_cluster = TABLE.c.host.in_(members)
    with database.writer() as session:
        session.execute(TABLE.update().where(in_cluster)
                        .values(state_version=TABLE.c.state_version))
        active = session.execute(
            sa.select(sa.func.count()).where(in_cluster, TABLE.c.suspend_state == ACTIVE)
        ).scalar_one()
        if active - 1 < floor:
            return None, active
        result = session.execute(
            TABLE.update().where(TABLE.c.host == host, TABLE.c.suspend_state == ACTIVE)
            .values(suspend_state=SUSPENDING, state_reason=reason,
                    state_changed_at=timeutils.utcnow(), power_requested_at=None,
                    state_version=TABLE.c.state_version + 1))
        if result.rowcount != 1:
            return None, active
        state_history.record(session, host, SUSPENDING, reason, timeutils.utcnow())
        return session.execute(
            sa.select(TABLE.c.state_version).where(TABLE.c.host == host)).scalar_one(), active


def _still_at(host, state, version):
    """WHERE clause of a lifecycle step's compare-and-swap: the host as the step read it."""
    return (TABLE.c.host == host, TABLE.c.suspend_state == state,
            TABLE.c.state_version == version)


def lock_if_still_at(session, host, state, version):
    """In the caller's transaction: lock ``host``'s row when it is still ``state`` at
    ``version`` (a no-op update); False when it moved since it was read."""
    still = session.execute(TABLE.update().where(*_still_at(host, state, version))
                            .values(state_version=TABLE.c.state_version))
    return still.rowcount == 1


def set_fields_at(database, host, state, version, **fields):
    """Write ``fields`` only while ``host`` is still ``state`` at ``version``.

    Each lifecycle step that acts calls this (or transition_at) first: False
    means an admin or another daemon moved the host since the step read it,
    and the step must send nothing. Never bumps state_version. With no
    ``fields`` it only checks, taking the same row lock a write would.
    """
    forbidden = {'suspend_state', 'state_version'} & set(fields)
    if forbidden:
        raise ValueError('use transition_at() to change %s' % ', '.join(sorted(forbidden)))
    with database.writer() as session:
        result = session.execute(
            TABLE.update().where(*_still_at(host, state, version))
            .values(state_version=TABLE.c.state_version, **fields))
        return result.rowcount == 1


def transition_at(database, host, state, version, to_state, reason, **fields):
    """transition() for a step that read ``state`` at ``version``; also writes ``fields``.

    Returns the new state_version, or None when the host moved meanwhile.
    """
    if to_state not in TRANSITIONS.get(state, ()):
        raise exception.IllegalTransition('%s -> %s is not a legal transition' % (state, to_state))
    conditions = list(_still_at(host, state, version))
    if to_state == ACTIVE and state == SUSPENDING:
        conditions.append(TABLE.c.power_requested_at.is_(None))
    with database.writer() as session:
        result = session.execute(
            TABLE.update().where(*conditions)
            .values(dict(fields, suspend_state=to_state, state_reason=reason,
                         state_changed_at=timeutils.utcnow(), power_requested_at=None,
                         state_version=version + 1)))
        if result.rowcount != 1:
            return None
        state_history.record(session, host, to_state, reason, timeutils.utcnow())
        return version + 1


def _idle_active():
    """Active, no power command in flight, nova-compute not disabled by nova-drs."""
    return (TABLE.c.suspend_state == ACTIVE, TABLE.c.power_requested_at.is_(None),
            TABLE.c.disabled_by_drs == sa.false())


def removable(database, hosts):
    """Those of ``hosts`` (computes nova stopped listing) whose record is ``_idle_active``."""
    if not hosts:
        return set()
    with database.reader() as session:
        return set(session.scalars(sa.select(TABLE.c.host).where(
            TABLE.c.host.in_(sorted(hosts)), *_idle_active())))


def delete_removed(database, hosts, batch_size):
    """Delete the records of ``hosts`` still ``_idle_active`` (re-checked in the
    DELETE: a host an admin or a daemon moved meanwhile is kept); rows deleted."""
    hosts, deleted = sorted(hosts), 0
    for start in range(0, len(hosts), batch_size):
        with database.writer() as session:
            deleted += session.execute(TABLE.delete().where(
                TABLE.c.host.in_(hosts[start:start + batch_size]), *_idle_active())).rowcount
    return deleted
