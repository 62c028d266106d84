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

"""The daemon's side of ``lb_plans``: store each plan, pick approved ones."""

import json

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models



def save(database, mode, actions, status, cluster=None):
    """Store a plan; ``actions`` are dicts with a "reason" each. Returns its id."""
    reasons = sorted({action['reason'] for action in actions})
    with database.writer() as session:
        row = models.LbPlan(cluster=cluster, mode=mode, status=status,
                            actions=json.dumps(actions), reasons=json.dumps(reasons),
                            created_at=timeutils.utcnow())
        session.add(row)
        session.flush()
        return row.id


def approved(database):
    """Approved plans, oldest first, as (id, actions)."""
    with database.reader() as session:
        rows = session.scalars(sa.select(models.LbPlan).filter_by(status='approved')
                               .order_by(models.LbPlan.id))
        return [(row.id, json.loads(row.actions or '[]')) for row in rows]


def set_status(database, plan_id, status, expected):
    """Compare-and-swap the status of a plan; True when this caller won."""
    with database.writer() as session:
        result = session.execute(sa.update(models.LbPlan)
                                 .where(models.LbPlan.id == plan_id,
                                        models.LbPlan.status == expected)
                                 .values(status=status, updated_at=timeutils.utcnow()))
        return result.rowcount == 1


def expire_pending(database):
    """A new plan supersedes the pending ones (they were built on an old view)."""
    with database.writer() as session:
        session.execute(sa.update(models.LbPlan).filter_by(status='pending')
                        .values(status='rejected', decided_by='superseded',
                                updated_at=timeutils.utcnow()))
