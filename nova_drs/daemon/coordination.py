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

"""Leader election between nova-loadbalancer daemons, on tooz.

Exactly one daemon acts: the holder of the tooz lock
``<group>-leader`` (group ``nova-drs-loadbalancer``). Standbys try to take
the lock once per cycle; on backends with groups (Redis, ZooKeeper,
memcached, Kubernetes) every daemon also joins the group so operators see the
standbys in the logs.

Why a lock we check rather than tooz's ``run_for_election`` hooks: tooz's
election is itself a lock (``leader_of_<group>``) and fires a hook when it is
won, but never when it is lost, so a leader whose lock expired would go on
acting. Here every heartbeat and every :meth:`Coordinator.still_leader` call
asks the backend whether the lock still holds *our* token
(``Lock.is_still_owner``); a failed heartbeat, an expired local lease or a
lock now held by someone else demotes this daemon at once. Backends whose
tooz locks cannot answer that question (mysql, postgresql, etcd3+http) are
refused at startup (coordination_backend.py checks the URL and gives every
backend call a deadline).

Failover: a crashed leader's lock expires ``leader_timeout`` seconds after
its last heartbeat; a standby takes it at its next :meth:`is_leader` call.
A leader that stops cleanly releases the lock, so the standby's next call
wins at once.

Usage by the daemon::

    with Coordinator(conf) as coordinator:       # start() ... stop()
        while running:
            if coordinator.is_leader():          # once per cycle
                for action in plan:
                    if not coordinator.still_leader():
                        break                    # never act without the lock
                    act(action, tag=str(coordinator.fence_token()))

:meth:`is_leader` heartbeats, runs the tooz watchers and tries to win the
lock; it is the per-cycle call. The service must call :meth:`still_leader`
again right before *each* side-effecting action (migration, disable, power
command): leadership can be lost mid-cycle, and only that check (one backend
round trip plus a local lease check) keeps two daemons from acting twice.
"""

import collections
import os
import socket
import threading
import time
import urllib.parse

from oslo_log import log as logging
from tooz import coordination as tooz_coordination

from nova_drs import exception
from nova_drs.daemon import coordination_backend as backend

LOG = logging.getLogger(__name__)

GROUP = 'nova-drs-loadbalancer'

class FenceToken(collections.namedtuple('FenceToken', 'member_id term')):
    """Identifies one leadership: who leads and how many times it has won.

    Tag actions with ``str(token)`` so a log or a record shows which
    leadership performed them.
    """

    def __str__(self):
        return '%s#%d' % (self.member_id, self.term)


class Coordinator:
    """Membership and leadership of one nova-loadbalancer daemon."""

    # The tooz session: set up by start(), torn down by stop().
    _heart = None  # the heartbeat thread
    _backend = None
    _coordinator = None
    _lock = None
    _has_groups = False
    # This daemon's leadership: held or not, times won, when the lease lapses.
    _leader = False
    _term = 0
    _lease_expiry = None

    def __init__(self, conf, member_id=None, group=GROUP):
        options = conf.drs_coordination
        self.url = backend.backend_url(conf)
        self.scheme = urllib.parse.urlsplit(self.url).scheme
        self.member_id = (member_id or options.member_id
                          or '%s-%d' % (socket.gethostname(), os.getpid()))
        self.heartbeat_interval = options.heartbeat_interval
        self.leader_timeout = options.leader_timeout
        if self.heartbeat_interval * 2 > self.leader_timeout:
            raise exception.CoordinationConfigError(
                '[drs_coordination] heartbeat_interval (%s s) must be at most '
                'half of [drs_coordination] leader_timeout (%s s), or the '
                'leader lock expires between two heartbeats'
                % (self.heartbeat_interval, self.leader_timeout))
        period = conf.loadbalancer.period
        if self.leader_timeout > period:
            LOG.warning('[drs_coordination] leader_timeout (%d s) exceeds '
                        '[loadbalancer] period (%d s): a dead leader may take '
                        'more than two periods to be replaced',
                        self.leader_timeout, period)
        self.group = group
        self._mutex = threading.RLock()
        self._stopping = threading.Event()

    # -- lifecycle ---------------------------------------------------------
    def start(self):
        """Connect, join the group and run for leader; start heartbeating.

        Raises CoordinationError when the backend cannot be reached and, on
        the single-node file backend, when another daemon holds the lock.
        """
        with self._mutex:
            self._backend = backend.BackendCaller('drs-coordination-backend')
            try:
                self._connect()
            except exception.CoordinationError:
                self._backend.close()
                self._backend = None
                raise
            if self.scheme == backend.SINGLE_NODE_SCHEME and not self._try_to_lead():
                self.stop()
                raise exception.CoordinationError(
                    'another nova-loadbalancer on this node holds the lock %s; '
                    'only one daemon may run without a coordination backend. '
                    'To run several daemons for high availability set %s to '
                    'a shared backend (e.g. redis://HOST:6379) on all of them'
                    % (self._lock.name, backend.URL_OPTION))
            if self.scheme != backend.SINGLE_NODE_SCHEME:
                try:
                    self._join_group()
                except Exception as exc:
                    self.stop()
                    raise exception.CoordinationError(
                        'cannot join group %s on %s: %s; check %s'
                        % (self.group, backend.redact(self.url), exc,
                           backend.URL_OPTION)) from None
                self._try_to_lead()
            self._stopping.clear()
            self._heart = threading.Thread(target=self._heartbeat_forever,
                                           name='drs-coordination-heartbeat',
                                           daemon=True)
            self._heart.start()
            LOG.info('nova-loadbalancer %s started on %s as %s', self.member_id,
                     backend.redact(self.url), 'leader' if self._leader else 'standby')

    def stop(self):
        """Stop heartbeating, hand leadership over and leave the group."""
        self._stopping.set()
        if self._heart is not None:
            self._heart.join()
            self._heart = None
        with self._mutex:
            if self._coordinator is None:
                return
            self._demote('daemon stopping', level=logging.INFO)
            try:
                # tooz leaves the joined groups; its executor takes ~1 s to stop.
                self._call(self._coordinator.stop, deadline=self.leader_timeout)
            except Exception as exc:
                LOG.warning('Could not leave %s cleanly (%s); membership expires '
                            'on its own', backend.redact(self.url), exc)
            self._coordinator = None
            self._backend.close()
            self._backend = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    # -- leadership ----------------------------------------------------------
    def is_leader(self):
        """Once per cycle: heartbeat, run watchers, run for leader if standby.

        Returns False when the backend cannot be reached or the lock is held
        by another daemon.
        """
        with self._mutex:
            if self._coordinator is None:
                return False
            self._beat()
            if self._has_groups:
                try:
                    self._call(self._coordinator.run_watchers)
                except Exception as exc:
                    LOG.warning('Coordination watchers failed: %s', exc)
            if not self._leader:
                self._try_to_lead()
            return self._leader

    def still_leader(self):
        """Right before each side-effecting action: is the lock still ours?

        Cheap: a local lease check plus one ownership query to the backend.
        Any doubt (lease ran out, backend slow or unreachable, lock taken
        over) demotes this daemon and returns False.
        """
        with self._mutex:
            if not self._leader:
                return False
            if self._lease_expiry is not None and time.monotonic() >= self._lease_expiry:
                self._demote('no successful heartbeat for %d s' % self.leader_timeout)
                return False
            return self._confirm_ownership()

    def step_down(self, reason):
        """Give the leadership up now (a cycle was abandoned): release the lock
        so a standby wins it at its next try.

        The heartbeat thread only renews a lock this daemon leads with, so it
        no longer keeps it; the daemon runs for leader again at its next
        :meth:`is_leader` call, which the launcher makes only once the
        abandoned cycle has returned.
        """
        with self._mutex:
            self._demote(reason)

    def fence_token(self):
        """FenceToken of the current leadership; NotLeader if there is none."""
        with self._mutex:
            if not self._leader:
                raise exception.NotLeader('%s is not the nova-loadbalancer leader'
                                          % self.member_id)
            return FenceToken(self.member_id, self._term)

    def members(self):
        """Member ids in the group (standbys included), sorted."""
        with self._mutex:
            if self._coordinator is None:
                return []
            if not self._has_groups:
                return [self.member_id]
            members = self._call(self._coordinator.get_members(self.group.encode()).get)
            return sorted(member.decode() for member in members)

    # -- internals -------------------------------------------------------------
    def _call(self, function, *args, deadline=None, **kwargs):
        return self._backend.call(deadline or self.heartbeat_interval,
                                  function, *args, **kwargs)

    def _connect(self):
        options = {}
        if self.scheme in ('redis', 'memcached'):
            options = {'lock_timeout': self.leader_timeout,
                       'leader_timeout': self.leader_timeout,
                       'membership_timeout': self.leader_timeout}
            if self.scheme == 'redis' and 'socket_timeout' not in self.url:
                # A hung backend must fail a call well before the lease ends.
                options['socket_timeout'] = self.heartbeat_interval
        elif self.scheme in ('zookeeper', 'kazoo'):
            options = {'timeout': self.leader_timeout}
        try:
            coordinator = tooz_coordination.get_coordinator(
                self.url, self.member_id.encode(), **options)
            self._call(coordinator.start, deadline=self.leader_timeout)
        except Exception as exc:
            raise exception.CoordinationError(
                'cannot use the coordination backend %s (%s): %s; check %s'
                % (backend.redact(self.url), type(exc).__name__, exc,
                   backend.URL_OPTION)) from None
        self._coordinator = coordinator
        self._lock = coordinator.get_lock(('%s-leader' % self.group).encode())

    def _join_group(self):
        group = self.group.encode()
        # Creating the group makes tooz wait a second before joining it.
        deadline = self.leader_timeout
        try:
            self._call(self._coordinator.join_group_create, group, deadline=deadline)
        except tooz_coordination.MemberAlreadyExist:
            pass
        except NotImplementedError:
            return
        self._call(self._coordinator.watch_join_group, group, self._member_joined,
                   deadline=deadline)
        self._call(self._coordinator.watch_leave_group, group, self._member_left,
                   deadline=deadline)
        self._has_groups = True

    def _member_joined(self, event):
        LOG.info('nova-loadbalancer %s joined group %s',
                 event.member_id.decode(), self.group)

    def _member_left(self, event):
        LOG.warning('nova-loadbalancer %s left group %s (stopped or dead)',
                    event.member_id.decode(), self.group)

    def _try_to_lead(self):
        started = time.monotonic()
        try:
            # An acquire that missed its deadline may have won afterwards.
            won = (self._call(self._lock.is_still_owner)
                   or self._call(self._lock.acquire, blocking=False))
        except Exception as exc:
            LOG.warning('Cannot run for leader on %s: %s', backend.redact(self.url), exc)
            return False
        if won:
            self._leader = True
            self._term += 1
            self._renew_lease(started)
            LOG.info('%s is now the nova-loadbalancer leader (term %d)',
                     self.member_id, self._term)
        return won

    def _heartbeat_forever(self):
        while not self._stopping.wait(self.heartbeat_interval):
            with self._mutex:
                if self._coordinator is not None:
                    self._beat()

    def _beat(self):
        """Renew membership and the leader lock; demote on any doubt."""
        started = time.monotonic()
        try:
            self._call(self._coordinator.heartbeat)
        except Exception as exc:
            self._demote('heartbeat to %s failed: %s' % (backend.redact(self.url), exc))
            return
        if self._leader and self._confirm_ownership():
            self._renew_lease(started)

    def _confirm_ownership(self):
        try:
            owner = self._call(self._lock.is_still_owner)
        except Exception as exc:
            self._demote('cannot confirm the leader lock: %s' % exc)
            return False
        if not owner:
            self._demote('the leader lock expired or was taken over')
        return owner

    def _renew_lease(self, started):
        # Measured from before the renewing call: the backend's expiry
        # starts later, so our lease always ends first.
        timed = (tooz_coordination.Characteristics.NON_TIMEOUT_BASED
                 not in self._coordinator.CHARACTERISTICS)
        self._lease_expiry = started + self.leader_timeout if timed else None

    def _demote(self, reason, level=logging.WARNING):
        if not self._leader:
            return
        self._leader = False
        self._lease_expiry = None
        LOG.log(level, '%s stops acting as nova-loadbalancer leader (term %d): %s',
                self.member_id, self._term, reason)
        try:
            self._call(self._lock.release)
        except Exception as exc:
            LOG.debug('Leader lock not released (%s); it expires on its own', exc)
