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

"""``/loadbalancer/plan``, ``/plans``: the daemon's plans, listed and shown with each action's
progress; approved or rejected in manual mode.

The daemon writes plans; the API only moves a pending plan to approved or
rejected (compare-and-swap, so a plan the daemon already started cannot be
rejected behind its back). A plan a later cycle superseded (its cluster's
actions changed) answers 409 naming the pending plan that replaced it.
"""

import webob.exc

from nova_drs import exception
from nova_drs.api import hosts
from nova_drs.api import rbac
from nova_drs.api import schemas
from nova_drs.db import plans as db_plans

DECISIONS = {
    'approve': (rbac.PLAN_APPROVE, 'approved'),
    'reject': (rbac.PLAN_REJECT, 'rejected'),
}
DECISION_RULES = tuple(rule for rule, _ in DECISIONS.values())


class PlansController:
    """Lists and shows plans; approves or rejects a pending one."""

    def __init__(self, database):
        self.database = database

    def show(self, context, cluster=None):
        return 200, {'plan': db_plans.latest(self.database, cluster)}

    def get(self, context, plan_id):
        plan = db_plans.get(self.database, plan_id)
        if plan is None:
            raise webob.exc.HTTPNotFound('plan %d not found' % plan_id)
        return 200, {'plan': plan}

    def list(self, context, status=None, cluster=None, limit='100'):
        """Newest first, without their actions, so a pending plan is never hidden
        behind a newer one of another cluster."""
        limit = int(limit)
        if not 1 <= limit <= 1000:
            raise webob.exc.HTTPBadRequest('limit must be between 1 and 1000')
        return 200, {'plans': db_plans.list_plans(self.database, status, cluster, limit)}

    def action(self, context, body):
        try:
            name, arguments = schemas.single_action(body, schemas.PLAN_ACTIONS)
        except exception.ValidationError as exc:
            raise webob.exc.HTTPBadRequest(str(exc)) from None
        rule, status = DECISIONS[name]
        rbac.authorize(context, rule)
        plan_id = arguments['plan_id']
        plan = db_plans.decide(self.database, plan_id, status, hosts.requester(context))
        if plan is None:
            current = db_plans.get(self.database, plan_id)
            if current is None:
                raise webob.exc.HTTPNotFound('plan %d not found' % plan_id)
            raise webob.exc.HTTPConflict('%s; only a pending plan can be %s'
                                         % (_why_not_pending(self.database, current), status))
        return 202, {'plan': plan}


def _why_not_pending(database, plan):
    """``plan 11 is approved``; a superseded plan names the pending plan of its cluster
    that replaced it: ``plan 11 was superseded by plan 14``."""
    if plan['status'] != db_plans.SUPERSEDED:
        return 'plan %d is %s' % (plan['id'], plan['status'])
    newer = db_plans.superseded_by(database, plan['id'], plan['cluster'])
    if newer is None:
        return ('plan %d was superseded: its cluster has no pending plan now'
                % plan['id'])
    return 'plan %d was superseded by plan %d' % (plan['id'], newer)
