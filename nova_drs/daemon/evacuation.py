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

"""Emptying a host (for a suspend or a maintenance): the steps that move its
servers away, follow nova's migrations and close our evacuation records.

``EvacuationSteps`` is mixed into lifecycle.HostLifecycle, which provides
``nova``, ``db``, ``budget`` (the cycle's budget.Budget),
``migration_timeout``, ``_now``, ``_crash_point``, ``_give_up`` and ``_check``.

A move that fails while a host enters maintenance is retried, not every
cycle but after ``retry_delay`` (30 s, doubling per failure of that server
in this maintenance, at most 30 min), counted from the failed requests in
``lb_migrations``: a restarted daemon keeps the pace. The failure is taken
as the rest of the cluster lacking room, so one suspended host of the
cluster is woken (within the cycle's ``max_wakes_per_cycle``), as vSphere
DPM does; one wake at a time, the next only after it ended.

A suspend's servers go where the plan that started it sent them
(``Targets``): the destination is named to nova, whose scheduler still
validates it with every filter (no force), and it counts on the cycle's
budget per destination. Left to nova's scheduler alone they landed on hosts
the same plan was about to empty, which then could not be emptied for the
whole ``migration_cooldown`` (the closed-loop twin measured it,
doc/source/twin.md). A server without a target (maintenance, an admin's
suspend, a daemon that restarted or took over) or whose target nova refuses
is placed by nova's scheduler.
"""

import datetime

from oslo_log import log as logging

from nova_drs import exception
from nova_drs import opt_out
from nova_drs.clients import nova_api
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations as drs_migrations

LOG = logging.getLogger(__name__)

LIVE_MOVABLE = frozenset(('ACTIVE', 'PAUSED'))
COLD_MOVABLE = frozenset(('SHUTOFF',))
FAILED_MIGRATION = frozenset(('failed', 'error', 'cancelled', 'reverted'))
#: States whose hosts are being emptied (their evacuation rows stay open).
EVACUATING = frozenset((drs_hosts.SUSPENDING, drs_hosts.ENTERING_MAINTENANCE))
#: Backoff of a server whose move off a host entering maintenance failed.
FIRST_RETRY = datetime.timedelta(seconds=30)
LAST_RETRY = datetime.timedelta(minutes=30)


def retry_delay(failures):
    """How long after its ``failures``-th failed move a server is tried again."""
    return min(LAST_RETRY, FIRST_RETRY * 2 ** min(max(failures - 1, 0), 16))


class Targets:
    """Where the plan that started a host's suspend sends each of its servers:
    {server: (source, destination)}, remembered by the orchestrator when it
    starts the suspend, read by the evacuation over the next cycles.

    Advice, not state: in memory only. A daemon that starts or takes over
    without it lets nova's scheduler choose, as before a plan named targets.
    Bounded by the servers of hosts being emptied (``retain``).
    """

    def __init__(self):
        self._of = {}

    def remember(self, moves):
        """``moves``: the plan's migrate actions off hosts it suspends."""
        for action in moves:
            self._of[action.instance] = (action.source, action.destination)

    def of(self, server, source):
        """The planned destination of ``server`` leaving ``source``, or None."""
        source_and_destination = self._of.get(server)
        if source_and_destination is None or source_and_destination[0] != source:
            return None
        return source_and_destination[1]

    def pending(self):
        """{server: (source, destination)}: what the next view counts as moving."""
        return dict(self._of)

    def discard(self, server):
        self._of.pop(server, None)

    def retain(self, sources):
        """Forget the servers of hosts no longer being emptied."""
        self._of = {server: pair for server, pair in self._of.items() if pair[0] in sources}


class Overtaken(Exception):
    """The host left the (state, version) a step read: an admin won the race."""


class EvacuationSteps:

    def close_abandoned_evacuations(self, status='cancelled', source=None):
        """Close evacuation rows of hosts no longer being emptied (once a cycle).

        A cold migration already under way stays open until nova finishes it
        and is then confirmed: no server is left waiting in VERIFY_RESIZE.
        """
        for request in drs_migrations.abandoned_evacuations(self.db, EVACUATING, source):
            if request['kind'] == 'cold' and not self._confirm_abandoned_cold(request):
                continue
            drs_migrations.finish(self.db, request['id'], status)
            LOG.info('%s: evacuation of %s %s', request['source'], request['instance_uuid'],
                     status)

    def _confirm_abandoned_cold(self, request):
        """True once an abandoned cold migration needs nothing more from us."""
        uuid = request['instance_uuid']
        try:
            server = self.nova.server(uuid)
        except exception.NovaRequestFailed:
            return True  # deleted meanwhile
        if server['status'] == 'VERIFY_RESIZE':
            try:
                self.nova.confirm_resize(uuid)
            except exception.NovaRequestFailed as exc:
                LOG.warning('confirming the cold migration of %s failed: %s', uuid, exc)
                return False
            return True
        return not server.get('OS-EXT-STS:task_state')

    def _move_servers(self, record, service, servers):
        # Maintenance and a forced admin suspend move opted-out servers too.
        pinned = [] if opt_out.overridden(record) else sorted(
            s['id'] for s in servers if opt_out.server_level(s) == opt_out.DISABLED)
        if pinned and self._give_up(record, 'servers opted out of DRS (%s=%s): %s' % (
                opt_out.KEY, opt_out.DISABLED, ', '.join(pinned))):
            return
        for server in servers:
            if server['id'] not in pinned and self._move_one(record, server):
                return

    def _this_attempt(self, record, uuid):
        """Our open request to move ``uuid`` off the host during this evacuation."""
        last = drs_migrations.last_request(self.db, uuid, source=record['host'])
        if last and (last['status'] != drs_migrations.REQUESTED
                     or last['created_at'] < record['state_changed_at']):
            return None  # from an earlier attempt, not this one
        return last

    def _move_one(self, record, server):
        """Start (or follow) one server's move; True when the evacuation stops here."""
        host, uuid = record['host'], server['id']
        phase = 'suspend' if record['suspend_state'] == drs_hosts.SUSPENDING else 'maintenance'
        status = server['status']
        task = server.get('OS-EXT-STS:task_state')
        last = self._this_attempt(record, uuid)
        if task or status in ('MIGRATING', 'RESIZE', 'VERIFY_RESIZE'):
            if last and self._timed_out(last):
                self._abort_migration(server, last)
                return self._give_up(record, 'migration of %s timed out' % uuid)
            return False
        if last:
            outcome = self._nova_outcome(uuid, last['created_at'])
            if outcome == 'failed':
                drs_migrations.finish(self.db, last['id'], 'failed')
                return self._move_failed(record, uuid, 'migration of %s failed; it stays on %s'
                                         % (uuid, host))
            if outcome == 'running':
                return False
            # Recorded but nova never got it (crash in between): ask again.
            drs_migrations.finish(self.db, last['id'], 'aborted')
        if status in LIVE_MOVABLE:
            kind = 'live'
        elif status in COLD_MOVABLE:
            kind = 'cold'
        else:
            return self._give_up(record, 'server %s is %s%s and cannot be moved' % (
                uuid, status, ' (%s)' % task if task else ''))
        if phase == 'maintenance' and self._backing_off(record, uuid):
            return False
        if phase == 'maintenance' and self.budget.nowhere_to_go():
            # Asking nova would only fail: make room first.
            room = self._make_room(record)
            self._check(record, state_reason='cannot enter maintenance yet: no other host '
                        'can receive servers%s' % ('; %s' % room if room else ''))
            return True
        target = self.targets.of(uuid, host)
        if target is not None and not self.budget.may_receive(target):
            self.targets.discard(uuid)  # disabled, down or being emptied since
            target = None
        if not self.budget.admit_evacuation(host, target):
            LOG.info('%s: migration limits reached; the rest moves in later cycles', host)
            return True
        return self._request_move(record, uuid, kind, phase, target)

    def _request_move(self, record, uuid, kind, phase, target=None):
        """Record the move, then ask nova (to the plan's ``target``, or to no
        host: nova's scheduler chooses); True when the evacuation stops here."""
        host = record['host']
        # Recorded only while the host is still being emptied as read:
        # a cancel that won stops the evacuation here.
        request_id = drs_migrations.request_at(
            self.db, host, record['suspend_state'], record['state_version'], uuid, kind,
            'evacuating host for %s' % phase)
        if request_id is None:
            raise Overtaken(host)
        self._crash_point('%s:migration-recorded' % phase)
        try:
            self._ask_nova(uuid, kind, target)
        except exception.NovaRequestFailed as exc:
            drs_migrations.finish(self.db, request_id, 'failed')
            return self._move_failed(record, uuid, 'nova refused to move %s: %s' % (uuid, exc))
        except exception.NovaUnavailable as exc:
            if exc.status is None:
                # No answer: whether nova took the move is unknown; the open
                # request makes the next cycle ask nova (_nova_outcome).
                raise
            # nova answered with an error: the move did not start. The host
            # gives up like on a refusal, and the fault takes it out of the
            # cycle (advance.Advance.lifecycles); other hosts go on.
            drs_migrations.finish(self.db, request_id, 'failed')
            self._give_up(record, 'nova failed to move %s: %s' % (uuid, exc))
            raise
        self._crash_point('%s:migration-requested' % phase)
        return False

    def _ask_nova(self, uuid, kind, target):
        """Move ``uuid`` to ``target`` (validated by nova's scheduler); if nova
        refuses that host, to the host its scheduler chooses."""
        move = self.nova.live_migrate if kind == 'live' else self.nova.cold_migrate
        if target is not None:
            self.targets.discard(uuid)
            try:
                move(uuid, target)
                return
            except exception.NovaRequestFailed as exc:
                LOG.info('%s: nova refused the planned destination %s (%s); its '
                         'scheduler chooses', uuid, target, exc)
        move(uuid)

    def _backing_off(self, record, uuid):
        """Whether ``uuid`` failed to move off the host lately (this maintenance)."""
        failures, last = drs_migrations.failures_since(self.db, uuid, record['host'],
                                                       record['state_changed_at'])
        return bool(failures) and last is not None and \
            self._now() - last < retry_delay(failures)

    def _move_failed(self, record, uuid, why):
        """A move nova did not carry out: a suspend is abandoned; a maintenance
        entry wakes a host to make room and tries the server again later."""
        if record['suspend_state'] != drs_hosts.ENTERING_MAINTENANCE:
            return self._give_up(record, why)
        failures, _ = drs_migrations.failures_since(self.db, uuid, record['host'],
                                                    record['state_changed_at'])
        room = self._make_room(record)
        return self._give_up(record, '%s%s; next try in %ds' % (
            why, '; %s' % room if room else '', retry_delay(failures).total_seconds()))

    def _make_room(self, record):
        """Wake one suspended host of the cluster: what was done, or None.

        One wake at a time per cluster: while one of its hosts wakes, the
        evacuation waits for it rather than waking more.
        """
        host = record['host']
        cluster = self.budget.cluster_of(host)
        suspended = []
        for other, state in sorted(drs_hosts.non_active_states(self.db).items()):
            if other == host or self.budget.cluster_of(other) != cluster:
                continue
            if state == drs_hosts.WAKING:
                return 'waiting for %s to wake to make room' % other
            if state == drs_hosts.SUSPENDED:
                suspended.append(other)
        for other in suspended:
            why = self.budget.power_refused('wake', other)
            if why:
                return 'waking %s to make room waits: %s' % (other, why)
            if drs_hosts.transition(self.db, other, drs_hosts.SUSPENDED, drs_hosts.WAKING,
                                    'woken to make room for the maintenance of %s'
                                    % host) is not None:
                self.budget.take_power('wake', other)
                LOG.info('%s: woke %s to make room for its maintenance', host, other)
                return 'woke %s to make room' % other
        return None

    def _nova_outcome(self, uuid, since):
        """'failed', 'running' or None: what nova did with our request since ``since``."""
        slack = datetime.timedelta(seconds=5)
        outcome = None
        for migration in self.nova.migrations(instance_uuid=uuid):
            created = nova_api.parse_time(migration.get('created_at'))
            if created is None or created < since - slack:
                continue
            if migration.get('status') in FAILED_MIGRATION:
                outcome = 'failed'
            elif outcome is None:
                outcome = 'running'
        return outcome

    def _settle_requests(self, host, servers):
        """Requests whose server left the host are done."""
        still_here = {server['id'] for server in servers}
        for request in drs_migrations.open_requests(self.db):
            if request['source'] == host and request['instance_uuid'] not in still_here:
                drs_migrations.finish(self.db, request['id'], 'done')

    def _confirm_finished_cold_migrations(self, host, phase):
        for migration in self.nova.migrations(source_compute=host, status='finished',
                                              migration_type='migration'):
            if migration.get('source_compute') == host:
                uuid = migration['instance_uuid']
                try:
                    self.nova.confirm_resize(uuid)
                except exception.NovaRequestFailed as exc:
                    LOG.warning('%s: confirming the cold migration of %s failed: %s',
                                host, uuid, exc)
                    continue
                drs_migrations.finish_for_instance(self.db, uuid, host, 'done')
                self._crash_point('%s:resize-confirmed' % phase)

    def _empty_in_placement(self, host):
        """No allocation left against the host's resource providers, the compute
        nodes observe listed for it this cycle (``compute_nodes``): one usage
        query per node of this host, whatever the size of the cloud. A host with
        no node in that listing is not known empty: it waits for a cycle that
        lists one (its suspend times out into ``error`` if none ever does).
        """
        nodes = self.compute_nodes.get(host)
        if not nodes:
            LOG.info('%s: no compute node of it in this cycle\'s listing; placement '
                     'is checked again next cycle', host)
            return False
        return not any(any(self.nova.provider_usages(node).values()) for node in nodes)

    def _abort_migration(self, server, request):
        try:
            for migration in self.nova.server_migrations(server['id']):
                self.nova.abort_live_migration(server['id'], migration['id'])
        except exception.NovaRequestFailed as exc:
            LOG.warning('aborting the migration of %s failed: %s', server['id'], exc)
        drs_migrations.finish(self.db, request['id'], 'aborted')

    def _timed_out(self, request):
        return self._now() - request['created_at'] > self.migration_timeout
