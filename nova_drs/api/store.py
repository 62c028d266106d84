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

"""The API's reads and writes in the DRS database (one short transaction each)."""

import json

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models



def latest_stats(database, hosts):
    """{host: its newest compute_node_stats sample}, in one query.

    MAX(sampled_at) per host walks the (host, sampled_at) unique index; with
    500 hosts x 100 samples on SQLite this takes ~17 ms where ranking every
    sample with a window function (stats.store.latest_hosts) takes ~130 ms.
    """
    stats = models.ComputeNodeStats
    latest = (sa.select(stats.host, sa.func.max(stats.sampled_at).label('sampled_at'))
              .where(stats.deleted == 0, stats.host.in_(hosts))
              .group_by(stats.host).subquery())
    query = (sa.select(stats.host, stats.cpu_used_percent, stats.memory_used,
                       stats.sampled_at)
             .join(latest, sa.and_(stats.host == latest.c.host,
                                   stats.sampled_at == latest.c.sampled_at)))
    with database.reader() as session:
        return {row.host: row._asdict() for row in session.execute(query)}


def drs_hosts(database, host=None):
    """{host: drs_hosts row as a public dict (no power options)}."""
    query = sa.select(models.DrsHost)
    if host is not None:
        query = query.filter_by(host=host)
    with database.reader() as session:
        return {row.host: _public_host(row) for row in session.scalars(query)}


def _public_host(row):
    return {
        'suspend_state': row.suspend_state,
        'state_reason': row.state_reason,
        'state_changed_at': row.state_changed_at,
        'mac_to_wake': row.mac_to_wake,
        'power_driver': row.power_driver,
        'power_mode': row.power_mode,
        'wake_failed': row.wake_failed,
    }


# --- admin requests for the daemon -----------------------------------------

def request_as_dict(row):
    return {
        'id': row.id, 'host': row.host, 'action': row.action, 'status': row.status,
        'requested_by': row.requested_by, 'created_at': row.created_at,
        'finished_at': row.finished_at, 'result': row.result,
    }


def add_request(database, host, action, requested_by):
    """Record a request unless one for the same host and action is open.

    Returns (request dict, created?).
    """
    requests = models.LbRequest
    with database.writer() as session:
        open_request = session.scalars(
            sa.select(requests).filter_by(host=host, action=action)
            .where(requests.status.in_(('pending', 'running')))).first()
        if open_request is not None:
            return request_as_dict(open_request), False
        row = requests(host=host, action=action, status='pending',
                       requested_by=requested_by, created_at=timeutils.utcnow())
        session.add(row)
        session.flush()
        return request_as_dict(row), True


# --- allow/deny rules ------------------------------------------------------

def rule_as_dict(row):
    return {'id': row.id, 'type': row.type, 'value': row.value, 'allow': row.allow,
            'created_at': row.created_at}


def list_rules(database):
    with database.reader() as session:
        return [rule_as_dict(row) for row in
                session.scalars(sa.select(models.LbRule).order_by(models.LbRule.id))]


def get_rule(database, rule_id):
    with database.reader() as session:
        row = session.get(models.LbRule, rule_id)
        return rule_as_dict(row) if row else None


def add_rule(database, rule_type, value, allow):
    with database.writer() as session:
        row = models.LbRule(type=rule_type, value=value, allow=allow)
        session.add(row)
        session.flush()
        return rule_as_dict(row)


def delete_rule(database, rule_id):
    with database.writer() as session:
        result = session.execute(sa.delete(models.LbRule).filter_by(id=rule_id))
        return result.rowcount == 1


# --- plans -----------------------------------------------------------------

def _loads(text):
    if not text:
        return []
    try:
        return json.loads(text)
    except ValueError:
        # Written by a daemon we do not control: show it rather than fail.
        return [text]


def plan_as_dict(row):
    return {
        'id': row.id, 'cluster': row.cluster, 'created_at': row.created_at,
        'updated_at': row.updated_at, 'mode': row.mode, 'status': row.status,
        'actions': _loads(row.actions), 'reasons': _loads(row.reasons),
        'decided_by': row.decided_by,
    }


def latest_plan(database, cluster=None):
    query = sa.select(models.LbPlan).order_by(models.LbPlan.id.desc()).limit(1)
    if cluster is not None:
        query = query.filter_by(cluster=cluster)
    with database.reader() as session:
        row = session.scalars(query).first()
        return plan_as_dict(row) if row else None


def get_plan(database, plan_id):
    with database.reader() as session:
        row = session.get(models.LbPlan, plan_id)
        return plan_as_dict(row) if row else None


def decide_plan(database, plan_id, status, decided_by):
    """pending -> ``status`` (compare-and-swap); the plan dict, or None if not pending."""
    plans = models.LbPlan
    with database.writer() as session:
        result = session.execute(
            sa.update(plans).where(plans.id == plan_id, plans.status == 'pending')
            .values(status=status, decided_by=decided_by, updated_at=timeutils.utcnow()))
        if result.rowcount != 1:
            return None
        return plan_as_dict(session.get(plans, plan_id))
