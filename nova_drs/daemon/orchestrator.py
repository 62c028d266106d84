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

"""Act: carry out a plan through nova, within limits, never twice.

* Migrations go through nova without ``force``: nova's scheduler re-validates
  the destination, so affinity rules and our own filters still hold even if
  our snapshot was stale.
* Limits per source, destination and cluster bound the load a cycle puts on
  the cloud; what does not fit waits for the next cycle (re-planned on fresh
  data then). One ``Budget`` per cycle is shared by the host lifecycle's
  evacuations, approved manual plans and the automatic plan, and also caps
  the suspends and wakes one cluster starts in a cycle.
* Every request is recorded before nova is asked. The cooldown is the
  planner's (one rule: cloud_view.last_moved gives it nova's records and these
  requests, failed ones included); here an action is refused only when its
  server had a move requested after the plan was decided, which the planner
  could not weigh, or a move that failed within the cooldown (one try per
  cooldown: a plan decided before the failure may still hold it).
* A server opted out (``drs:automation``) is refused here too: ``disabled``
  always, ``manual`` unless the action comes from an approved manual plan.
* Suspends and wakes only move a host's DRS state (compare-and-swap); the
  host lifecycle does the work over the next cycles.
"""

import collections
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs import cluster_policy
from nova_drs import exception
from nova_drs import opt_out
from nova_drs.daemon import budget as budget_mod
from nova_drs.daemon import evacuation
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.loadbalancer import model

LOG = logging.getLogger(__name__)

def _members_by_cluster(view):
    """{'of': {host: cluster}, 'hosts': {cluster: [hosts]}} of the view, for floor checks."""
    of = {h.name: h.cluster for h in view.snapshot.hosts}
    hosts = collections.defaultdict(list)
    for host, cluster in of.items():
        hosts[cluster].append(host)
    return {'of': of, 'hosts': hosts}


class Orchestrator:

    #: Instances one query asks about moves since the plan, ahead of the action that needs it.
    MOVED_SINCE_BATCH = 500

    def __init__(self, nova, database, limits, migration_cooldown, still_leader,
                 clock=timeutils.utcnow, floor_of=None, targets=None):
        self.nova = nova
        self.db = database
        # per_host, per_destination, per_cluster, suspends_per_cycle, wakes_per_cycle
        self.limits = limits
        self.cooldown = datetime.timedelta(seconds=migration_cooldown)
        self.still_leader = still_leader
        self._now = clock
        # (view, cluster) -> the cluster's floor of active hosts (SafetyLimits.floor)
        self.floor_of = floor_of or (lambda view, cluster: model.DEFAULT_LIMITS.floor)
        #: the plan's destinations for the servers of the hosts it suspends,
        #: which the host lifecycle moves (evacuation.Targets)
        self.targets = targets if targets is not None else evacuation.Targets()

    def execute(self, actions, view, budget=None, progress=None, decided_at=None):
        """Carry out plan actions (db.plans.Action) decided at ``decided_at`` (naive UTC;
        None: now) within ``budget`` (the cycle's, shared by every plan it runs);
        returns {'started': n, 'done': [actions started], 'skipped': [(action, why)],
        'waiting': [actions the budget deferred]}.

        ``progress`` (a db.plan_progress.Progress) when the actions are a stored plan's:
        each is claimed before it is carried out, nova's refusal and every other
        outcome recorded; what the budget defers stays pending for a later
        cycle, what leadership loss leaves stays pending for the next leader.
        One pass, O(actions): no per-action scan or query besides the claims.
        """
        hosts = {h.name: h for h in view.snapshot.hosts}
        suspending = {a.host for a in actions if a.kind == 'suspend'}
        budget = budget or budget_mod.budget_for(view, self.limits)
        moved_since = self._moved_since_lookup(actions, decided_at or self._now())
        members = []
        skipped, waiting, done, evacuating = [], [], [], []
        for index, action in enumerate(actions):
            if action.kind in ('wake', 'suspend'):
                why = budget.power_refused(action.kind, action.host)
                if why:
                    skipped.append((action, why))
                    waiting.append(action)
                    continue
                if not self._leading(len(actions) - index):
                    break
                if self._start_power(action, view, budget, progress, members, skipped):
                    done.append(action)
            elif action.source in suspending:
                # The host lifecycle empties it, to this plan's destinations.
                evacuating.append(action)
                if progress is not None:
                    progress.skip(action, 'its source is being suspended: the host '
                                          'lifecycle moves it')
                continue
            else:
                # The budget first: what waits costs two counter lookups.
                why = budget.migration_refused(action.source, action.destination)
                if why:
                    skipped.append((action, why))
                    waiting.append(action)
                    continue
                why = self._refuse(action, view, hosts) or moved_since(action)
                if why:
                    self._refused(action, why, skipped, progress)
                    continue
                if not self._leading(len(actions) - index):
                    break
                if self._migrate(action, view, progress):
                    done.append(action)
                    budget.take_migration(action.source, action.destination)
        suspended = {a.host for a in done if a.kind == 'suspend'}
        self.targets.remember(a for a in evacuating if a.source in suspended)
        if progress is not None:
            progress.flush()
        if waiting:
            LOG.info('%d actions wait for a later cycle (migration, suspend and wake '
                     'limits)', len(waiting))
        return {'started': len(done), 'done': done, 'skipped': skipped, 'waiting': waiting}

    def _start_power(self, action, view, budget, progress, members, skipped):
        """Claim and start one suspend or wake; True when its state moved.

        ``members``: the view's cluster membership, built on the first suspend
        of the pass (a one-item list, so it is built once per pass)."""
        if progress is not None and not progress.claim(action):
            return False  # another daemon took it first
        if action.kind == 'suspend' and not members:
            members.append(_members_by_cluster(view))
        why = self._power(action, view, members[0] if members else None)
        if why:
            LOG.info('not now: %s (%s)', action, why)
            skipped.append((action, why))
            if progress is not None:
                progress.finished(action, 'skipped', why)
            return False
        budget.take_power(action.kind, action.host)
        return True

    def _leading(self, left):
        """Asked right before each start only (with HA, one query to the backend):
        what waits or is refused never asks."""
        if self.still_leader():
            return True
        LOG.warning('lost leadership: %d actions left to the next leader', left)
        return False

    @staticmethod
    def _refused(action, why, skipped, progress):
        LOG.info('not now: %s (%s)', action, why)
        skipped.append((action, why))
        if progress is not None:
            progress.skip(action, why)

    def _power(self, action, view, members):
        """Move the host to waking or suspending; why not, or None.

        A suspend goes through the same locked floor check as an admin's
        (db.hosts.suspend_within_floor): an admin suspend that won meanwhile
        is counted, never overrun.
        """
        if action.kind == 'wake':
            version = drs_hosts.transition(self.db, action.host, drs_hosts.SUSPENDED,
                                           drs_hosts.WAKING, action.reason)
            return None if version is not None else 'host no longer suspended'
        cluster = members['of'].get(action.host, cluster_policy.DEFAULT_CLUSTER)
        floor = self.floor_of(view, cluster)
        version, active = drs_hosts.suspend_within_floor(
            self.db, action.host, members['hosts'].get(cluster, ()), floor, action.reason)
        if version is not None:
            return None
        if active - 1 < floor:
            return ('cluster %s at its floor of %d active hosts (%d active now)'
                    % (cluster, floor, active))
        return 'host no longer active'

    def _refuse(self, action, view, hosts):
        source, destination = hosts.get(action.source), hosts.get(action.destination)
        server = view.servers.get(action.instance)
        if server is None or server.get('OS-EXT-SRV-ATTR:host') != action.source:
            return 'instance no longer on %s' % action.source
        if server.get('OS-EXT-STS:task_state'):
            return 'instance busy (%s)' % server['OS-EXT-STS:task_state']
        level = opt_out.server_level(server)
        if not opt_out.may_move(level, action.automation):
            return 'instance opted out (%s=%s)' % (opt_out.KEY, level)
        if destination is None or destination.power_state != model.ACTIVE:
            return 'destination not active'
        if source is None or source.excluded or destination.excluded:
            return 'host excluded by rules or stale statistics'
        if server['status'] not in ('ACTIVE', 'PAUSED', 'SHUTOFF'):
            return 'instance %s: neither live nor cold migratable' % server['status']
        return None

    def _moved_since_lookup(self, actions, decided_at):
        """action -> why its server must not move on this plan, or None: a move of
        it was requested after ``decided_at``, so the plan did not weigh it, or
        failed within the cooldown (lb_migrations.held_back). Asked in batches of
        MOVED_SINCE_BATCH migrations, from the first one asked about onwards: one
        query for most cycles, never one per action.
        """
        if not self.cooldown:
            return lambda action: None
        migrations = [a for a in actions if a.kind == 'migrate']
        index = {id(action): i for i, action in enumerate(migrations)}
        known, moved = set(), set()

        def moved_since(action):
            if action.instance not in known:
                start = index[id(action)]
                batch = {a.instance for a in migrations[start:start + self.MOVED_SINCE_BATCH]}
                moved.update(lb_migrations.held_back(self.db, batch, decided_at,
                                                     self._now() - self.cooldown))
                known.update(batch)
            if action.instance in moved:
                return ('moved since this plan was decided, or failed to move, within '
                        'the cooldown (%ds)' % self.cooldown.total_seconds())
            return None
        return moved_since

    def _migrate(self, action, view, progress=None):
        """Claim (a stored plan's action), record, then ask nova; True when nova accepted."""
        server = view.servers[action.instance]
        kind = 'live' if server['status'] in ('ACTIVE', 'PAUSED') else 'cold'
        if progress is not None and not progress.claim(action):
            return False  # another daemon took it first
        request_id = lb_migrations.request(self.db, action.instance, action.source,
                                           action.destination, kind, action.reason)
        try:
            if kind == 'live':
                self.nova.live_migrate(action.instance, action.destination)
            else:
                self.nova.cold_migrate(action.instance, action.destination)
        except (exception.NovaRequestFailed, exception.NovaUnavailable) as exc:
            if exc.status is None:  # no answer: nova may have it; never sent again
                self._interrupted(action, progress, 'no answer from nova', exc)
                raise
            LOG.warning('nova refused %s: %s', action, exc)
            lb_migrations.finish(self.db, request_id, 'failed')
            if progress is not None:
                progress.finished(action, 'failed', 'nova refused (%s): %s' % (exc.status, exc))
            return False
        except Exception as exc:
            self._interrupted(action, progress, 'interrupted', exc)
            raise
        if progress is not None:
            progress.finished(action, 'done')
        LOG.info('migrating %s %s -> %s (%s)', action.instance, action.source,
                 action.destination, action.reason)
        return True

    @staticmethod
    def _interrupted(action, progress, what, exc):
        """A claimed action whose request may or may not have reached nova: failed,
        with the reason, and never sent again (at most once)."""
        if progress is None:
            return
        try:
            progress.finished(action, 'failed', '%s, not retried: %s' % (what, exc))
        except Exception:
            LOG.exception('%s: outcome not recorded; it stays started', action)

    def settle(self, view, migration_timeout):
        """Close finished requests, confirm cold ones, abort those that overran.

        ``view``: anything with this cycle's ``servers`` (a View or an observe.Raw).
        Returns how many requests were open (evacuations included).
        """
        timeout = datetime.timedelta(seconds=migration_timeout)
        requests = lb_migrations.open_requests(self.db)
        for request in requests:
            if request['destination'] is None:
                continue  # evacuation for a suspend: the host lifecycle settles it
            server = view.servers.get(request['instance_uuid'])
            if server is None:
                lb_migrations.finish(self.db, request['id'], 'done')
                continue
            where = server.get('OS-EXT-SRV-ATTR:host')
            task = server.get('OS-EXT-STS:task_state')
            if server['status'] == 'VERIFY_RESIZE' and request['kind'] == 'cold':
                try:
                    self.nova.confirm_resize(request['instance_uuid'])
                except exception.NovaRequestFailed as exc:
                    LOG.warning('confirming %s failed: %s', request['instance_uuid'], exc)
                    continue
                lb_migrations.finish(self.db, request['id'], 'done')
            elif where != request['source'] and not task:
                lb_migrations.finish(self.db, request['id'], 'done')
            elif task and self._now() - request['created_at'] > timeout:
                for migration in self.nova.server_migrations(request['instance_uuid']):
                    self.nova.abort_live_migration(request['instance_uuid'], migration['id'])
                lb_migrations.finish(self.db, request['id'], 'aborted')
            elif not task and where == request['source'] and \
                    self._now() - request['created_at'] > datetime.timedelta(seconds=30):
                lb_migrations.finish(self.db, request['id'], 'failed')
        return len(requests)
