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

"""Leader election of nova-loadbalancer on a real Redis.

Redis on 127.0.0.1:6379, each test in its own group. A crash is a real one:
a member subprocess killed with SIGKILL, so it neither releases its lock nor
leaves the group. The file backend and the configuration errors are in
tests/unit/daemon/test_coordination.py, whose helpers these tests use.
"""

import signal
import socket
import threading
import time

import pytest
import redis
from tooz import coordination as tooz_coordination

from nova_drs import exception
from nova_drs.daemon import coordination
from tests.unit.daemon import test_coordination as file_backend
from tests.unit.daemon.test_coordination import HEARTBEAT_INTERVAL
from tests.unit.daemon.test_coordination import LEADER_TIMEOUT
from tests.unit.daemon.test_coordination import make_conf
from tests.unit.daemon.test_coordination import wait_for_line

REDIS_URL = 'redis://127.0.0.1:6379'
POLL = 0.05
spawn = file_backend.spawn


@pytest.fixture
def group(redis_name):
    """The test's tooz group, created before its members start.

    A member that creates the group waits a second inside tooz
    (join_group_create retries) within its start deadline, which these tests
    set to LEADER_TIMEOUT (2 s); under make test's four lanes (load 8 on two
    cores) the rest of that deadline once ran out. The members here join an
    existing group, as every daemon but the first does; the creating join is
    the functional and integration tiers' (Redis, leader_timeout 6 s and more).
    """
    creator = tooz_coordination.get_coordinator(REDIS_URL, b'fixture')
    creator.start()
    try:
        creator.create_group(redis_name.encode()).get()
    finally:
        creator.stop()
    return redis_name


@pytest.fixture
def members(tmp_path, group):
    """Factory of started Redis members of ``group``; all stopped at teardown."""
    started = []

    def start(name, url=REDIS_URL, leader_timeout=LEADER_TIMEOUT):
        member = coordination.Coordinator(make_conf(tmp_path, url, leader_timeout),
                                          member_id=name, group=group)
        member.start()
        started.append(member)
        return member

    yield start
    for member in started:
        member.stop()


def wait_for_leadership(member, timeout):
    """Call is_leader() like a cycle would until it wins; return seconds taken."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if member.is_leader():
            return time.monotonic() - started
        time.sleep(POLL)
    raise AssertionError('%s did not become leader within %.1f s'
                         % (member.member_id, timeout))


def wait_for_members(member, expected, timeout):
    """``member.members()`` once it is ``expected``, or as it was at ``timeout``."""
    deadline = time.monotonic() + timeout
    seen = member.members()
    while seen != expected and time.monotonic() < deadline:
        time.sleep(POLL)
        seen = member.members()
    return seen


class TcpProxy:
    """A loopback TCP relay to Redis that can be cut, like a network failure."""

    def __init__(self, port):
        self._upstream = ('127.0.0.1', port)
        self._listener = socket.create_server(('127.0.0.1', 0))
        self.port = self._listener.getsockname()[1]
        self._sockets = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._upstream)
            self._sockets += [client, upstream]
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target),
                                 daemon=True).start()

    @staticmethod
    def _pump(source, target):
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass

    def cut(self):
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept(); close() alone does not
        self._listener.close()
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def test_single_member_becomes_leader(members):
    member = members('alpha')

    assert member.is_leader()
    assert member.still_leader()
    assert member.fence_token() == ('alpha', 1)
    assert str(member.fence_token()) == 'alpha#1'
    assert member.members() == ['alpha']


def test_two_members_exactly_one_leader(members):
    # Nothing here waits for a lock or a membership to expire: a lifetime a
    # starved heartbeat thread cannot outlast on a loaded machine.
    alpha = members('alpha', leader_timeout=60)
    beta = members('beta', leader_timeout=60)

    for _ in range(5):
        roles = [alpha.is_leader(), beta.is_leader()]
        assert roles == [True, False]
    assert not beta.still_leader()
    with pytest.raises(exception.NotLeader):
        beta.fence_token()
    assert alpha.members() == ['alpha', 'beta']


def test_heartbeat_keeps_leadership_between_cycles(members):
    alpha = members('alpha')
    beta = members('beta')
    assert alpha.is_leader()

    # No cycle for longer than the lock lifetime: the heartbeat renews it.
    time.sleep(LEADER_TIMEOUT * 1.5)

    assert alpha.still_leader()
    assert not beta.is_leader()


def test_crashed_leader_is_replaced_within_leader_timeout(spawn, members, group):
    crashing = spawn(REDIS_URL, group, 'crashing')
    wait_for_line(crashing, 'leader')
    standby = members('standby')
    assert not standby.is_leader()
    assert standby.members() == ['crashing', 'standby']

    crashing.send_signal(signal.SIGKILL)
    crashing.wait()
    failover = wait_for_leadership(standby, timeout=LEADER_TIMEOUT * 3)

    # The dead leader's lock lives at most leader_timeout after its last
    # heartbeat; the standby's cycle then takes it (here every POLL seconds).
    assert failover <= LEADER_TIMEOUT + POLL + 0.5, failover
    assert standby.fence_token() == ('standby', 1)
    # tooz's heartbeat renews the membership, then the lock: a kill between
    # the two leaves the membership up to one heartbeat_interval longer than
    # the lock (seen under load), never more.
    assert wait_for_members(standby, ['standby'],
                            timeout=HEARTBEAT_INTERVAL + 0.5) == ['standby']


def test_stalled_leader_steps_down_when_it_resumes(spawn, members, group):
    stalled = spawn(REDIS_URL, group, 'stalled')
    wait_for_line(stalled, 'leader')
    standby = members('standby')

    # A stall longer than the lock's lifetime (GC pause, VM freeze): the
    # standby takes over meanwhile.
    stalled.send_signal(signal.SIGSTOP)
    try:
        wait_for_leadership(standby, timeout=LEADER_TIMEOUT * 3)
    finally:
        stalled.send_signal(signal.SIGCONT)

    # Back to life, its next cycle sees it lost the lock; it does not take it back.
    wait_for_line(stalled, 'standby', timeout=LEADER_TIMEOUT * 2)
    for _ in range(5):
        assert standby.still_leader()
        time.sleep(HEARTBEAT_INTERVAL)


def test_clean_stop_hands_over_at_the_next_cycle(members):
    alpha = members('alpha')
    beta = members('beta')
    assert alpha.is_leader() and not beta.is_leader()

    alpha.stop()
    started = time.monotonic()

    assert beta.is_leader()
    assert time.monotonic() - started < 0.5
    assert not alpha.is_leader()


def test_leader_whose_lock_was_taken_over_stops_acting(members, group):
    alpha = members('alpha')
    beta = members('beta')
    assert alpha.is_leader()
    # The lock expires behind alpha's back (as after a long stall) and beta
    # wins it.
    client = redis.Redis(host='127.0.0.1', port=6379)
    (lock_key,) = client.keys('*%s-leader*' % group)
    client.delete(lock_key)
    assert beta.is_leader()

    assert not alpha.still_leader()
    assert not alpha.is_leader()
    assert beta.still_leader()
    assert beta.fence_token() == ('beta', 1)

    # Re-elected later, alpha leads a new term.
    beta.stop()
    assert alpha.is_leader()
    assert alpha.fence_token() == ('alpha', 2)


def test_leader_that_loses_the_backend_stops_acting_and_is_replaced(members):
    proxy = TcpProxy(6379)
    alpha = members('alpha', url='redis://127.0.0.1:%d' % proxy.port)
    beta = members('beta')
    assert alpha.is_leader() and not beta.is_leader()

    proxy.cut()
    cut = time.monotonic()

    assert not alpha.still_leader()
    # Deadlines, not tooz's minute of Redis retries: the check waits at most
    # for the heartbeat in flight and its own call.
    assert time.monotonic() - cut < 3 * HEARTBEAT_INTERVAL + 0.5
    assert not alpha.is_leader()
    failover = wait_for_leadership(beta, timeout=LEADER_TIMEOUT * 3)
    assert failover <= LEADER_TIMEOUT + POLL + 0.5, failover
    assert not alpha.still_leader()
