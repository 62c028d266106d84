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

"""History of host state transitions (table ``drs_host_state_changes``).

Written in the same transaction as the transition itself, so the history
never disagrees with ``drs_hosts``; read by the metrics and energy reports.
"""

import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import retention

TABLE = models.DrsHostStateChange.__table__


def record(session, host, state, reason, changed_at):
    """Append one transition inside the caller's transaction."""
    session.execute(TABLE.insert().values(host=host, state=state, reason=reason,
                                          changed_at=changed_at))


def changes(database, since=None, until=None, hosts=None):
    """Transitions as dicts, oldest first, optionally bounded in time and hosts."""
    query = sa.select(TABLE).order_by(TABLE.c.changed_at, TABLE.c.id)
    if since is not None:
        query = query.where(TABLE.c.changed_at >= since)
    if until is not None:
        query = query.where(TABLE.c.changed_at < until)
    if hosts is not None:
        query = query.where(TABLE.c.host.in_(list(hosts)))
    with database.reader() as session:
        return [dict(row._mapping) for row in session.execute(query)]


def state_before(database, when, hosts=None):
    """{host: the state it entered last before ``when``} (hosts with history only)."""
    latest = (sa.select(TABLE.c.host, sa.func.max(TABLE.c.id).label('id'))
              .where(TABLE.c.changed_at < when).group_by(TABLE.c.host))
    if hosts is not None:
        latest = latest.where(TABLE.c.host.in_(list(hosts)))
    latest = latest.subquery()
    query = sa.select(TABLE.c.host, TABLE.c.state).join(latest, TABLE.c.id == latest.c.id)
    with database.reader() as session:
        return dict(session.execute(query).all())


def counts_by_state(database, since):
    """{state: transitions into it from ``since`` on}, one grouped query over the
    changed_at index (suspends, wakes, errors)."""
    with database.reader() as session:
        return dict(session.execute(
            sa.select(TABLE.c.state, sa.func.count()).where(TABLE.c.changed_at >= since)
            .group_by(TABLE.c.state)).all())


def recent(database, since, states):
    """[(host, state, changed_at)] of transitions into ``states`` from ``since`` on,
    per host in order (wake latencies)."""
    with database.reader() as session:
        return session.execute(
            sa.select(TABLE.c.host, TABLE.c.state, TABLE.c.changed_at)
            .where(TABLE.c.changed_at >= since, TABLE.c.state.in_(states))
            .order_by(TABLE.c.host, TABLE.c.changed_at, TABLE.c.id)).all()


#: ``purge`` and ``purgeable`` of history_purge: rows before a cut-off go but each
#: host's newest one, which says what state the host was in at the cut-off.
_RETENTION = retention.NewestKept(TABLE, 'changed_at')
purge = _RETENTION.purge
purgeable = _RETENTION.purgeable
