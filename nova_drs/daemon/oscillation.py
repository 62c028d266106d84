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

"""Oscillation guard: hold servers the daemon migrated too often.

Counts the migrations ``lb_migrations`` recorded per server within the
window (one grouped query for the planned servers only); a server at the
limit keeps its host, and a suspend of that host in the same plan is dropped
too, since emptying it would move the server anyway.

The planner already leaves those servers where they are (the observer reads
them, ``Raw.held_servers``, and the view makes them unmovable), so it
empties another host instead of planning, every cycle, a suspend this guard
drops (the closed-loop twin found a host kept on for nine hours that way);
the guard catches what changed between the observation and the act.
"""

import datetime

from oslo_utils import timeutils

from nova_drs.db import lb_migrations
from nova_drs.observability import metrics


def hold(database, actions, hosted, max_moves, window, now=None, at_limit=None):
    """(actions to carry out, held servers as dicts) for plan ``actions`` (db.plans.Action).

    ``hosted``: {server uuid: host} of the cycle's view; the servers of a host
    planned for suspend count as moving too (the host lifecycle evacuates them).
    ``at_limit``: {server uuid: moves} the observer found at the limit
    (``Raw.held_servers``): the plan already left them, they are reported too.
    """
    if window <= 0:
        return actions, []
    since = (now or timeutils.utcnow()) - datetime.timedelta(seconds=window)
    suspending = {a.host for a in actions if a.kind == 'suspend'}
    moving = {a.instance: a.source for a in actions if a.kind == 'migrate'}
    moving.update({uuid: host for uuid, host in hosted.items() if host in suspending})
    moves = {uuid: count for uuid, count in (at_limit or {}).items() if uuid in hosted}
    moves.update(lb_migrations.recent_moves(database, moving, since))
    held = [{'instance': uuid, 'host': moving.get(uuid) or hosted[uuid], 'moves': count,
             'reason': 'moved %d times in %d s (max_moves_per_server %d)'
                       % (count, window, max_moves)}
            for uuid, count in sorted(moves.items()) if count >= max_moves]
    held_ids = {h['instance'] for h in held}
    kept_on = {h['host'] for h in held}
    kept = [a for a in actions
            if not (a.kind == 'migrate' and a.instance in held_ids)
            and not (a.kind == 'suspend' and a.host in kept_on)]
    metrics.note_held(len(held))
    return kept, held
