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

"""Settling the plan actions a previous leadership term left ``started``.

A daemon claims a stored plan's action (``pending -> started``, the row
naming its term) before it asks nova. If it dies, or loses the lead, between
the claim and recording nova's answer, the action stays ``started``: the next
leader must neither drop it (at most once) nor send it blindly (twice). It
asks nova what happened instead, for each such action of another term:

- a migration: the server on its destination, or a migration record of the
  server nova created after the claim, means nova was asked: ``done``; the
  server busy (a task state) means nova is still at it: left for a later
  cycle; the server on its source, idle, with no such record, means nova was
  never asked: back to ``pending``, so this leader sends it (once); gone or
  on a third host: ``skipped``, the action no longer applies;
- a suspend or a wake: the host's DRS state moved past its start (the
  claim and the transition are the same daemon's two writes): ``done``;
  otherwise ``pending``.

The one comparison of two clocks: nova's ``created_at`` of a migration with
the claim's time, both UTC (what NTP keeps the control plane within). The
term itself is compared for equality only.
"""


from oslo_log import log as logging

from nova_drs import exception
from nova_drs.clients import nova_api
from nova_drs.db import hosts
from nova_drs.db import lb_migrations
from nova_drs.db import plan_progress
from nova_drs.db import plans

LOG = logging.getLogger(__name__)

#: The host states a suspend, resp. a wake, has left behind once it started.
_STARTED_STATES = {'suspend': (hosts.SUSPENDING, hosts.SUSPENDED, hosts.ERROR),
                   'wake': (hosts.WAKING, hosts.ACTIVE, hosts.ERROR)}


def reconcile(nova, database, token):
    """Settle every action another term than ``token`` left started; {status: n}."""
    orphans = plans.orphans(database, token)
    if not orphans:
        return {}
    states = (hosts.states(database) if any(a.kind != 'migrate' for _, a, _ in orphans)
              else {})
    settled = {}
    for plan_id, action, claimed_at in orphans:
        try:
            outcome = (_migration(nova, action, claimed_at) if action.kind == 'migrate'
                       else _power(action, states))
        except exception.NovaUnavailable as exc:
            LOG.warning('plan %s: %s left started by a previous leader, nova cannot '
                        'say what became of it (%s); asked again next cycle',
                        plan_id, action, exc)
            continue
        if outcome is None:
            continue
        status, detail = outcome
        if status == plan_progress.PENDING and action.kind == 'migrate':
            # The dead leader's request record, if it got that far: no move
            # happened, and it must not hold the resent one back (cooldown).
            lb_migrations.withdraw(database, action.instance, action.source,
                                   action.destination)
        if plan_progress.record(database, plan_id, [(action.position, detail)], status):
            LOG.warning('plan %s: %s left started by a previous leader: %s (%s)',
                        plan_id, action, status, detail)
            settled[status] = settled.get(status, 0) + 1
    return settled


def _migration(nova, action, claimed_at):
    """(status, detail), or None to look again next cycle."""
    try:
        server = nova.server(action.instance)
    except exception.NovaRequestFailed as exc:
        if exc.status == 404:
            return plan_progress.SKIPPED, 'the server no longer exists'
        raise exception.NovaUnavailable(str(exc), exc.status) from None
    host = server.get('OS-EXT-SRV-ATTR:host')
    if host == action.destination:
        return plan_progress.DONE, 'found on its destination after a change of leader'
    since_claim = [m for m in nova.migrations(instance_uuid=action.instance)
                   if (nova_api.parse_time(m.get('created_at')) or claimed_at) >= claimed_at]
    if since_claim:
        newest = max(since_claim, key=lambda m: m.get('id') or 0)
        return plan_progress.DONE, 'nova migration %s (%s) after a change of leader' % (
            newest.get('id'), newest.get('status'))
    if server.get('OS-EXT-STS:task_state'):
        return None
    if host == action.source:
        return plan_progress.PENDING, 'never reached nova before a change of leader; sent again'
    return plan_progress.SKIPPED, 'the server is now on %s' % host


def _power(action, states):
    """(status, detail): the host's state says whether the transition started."""
    if states.get(action.host) in _STARTED_STATES[action.kind]:
        return plan_progress.DONE, 'host %s after a change of leader' % states[action.host]
    return plan_progress.PENDING, 'never started before a change of leader; sent again'
