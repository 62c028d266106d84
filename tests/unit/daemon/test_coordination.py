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

"""Leader election of nova-loadbalancer against real backends.

Redis on 127.0.0.1:6379 (each test in its own group) and the file backend in
a temp dir. A crash is a real one: a member subprocess killed with SIGKILL,
so it neither releases its lock nor leaves the group.
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

from oslo_config import cfg
import pytest
import redis

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.daemon import coordination
from tests import services

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
REDIS_URL = 'redis://127.0.0.1:6379'
LEADER_TIMEOUT = 2  # seconds; the member subprocess uses the same values
HEARTBEAT_INTERVAL = 0.5
POLL = 0.05


def make_conf(tmp_path, url='', leader_timeout=LEADER_TIMEOUT,
              heartbeat_interval=HEARTBEAT_INTERVAL):
    """Options from a config file, as an operator sets them.

    (set_override would leak: it is stored on the module-level OptGroup that
    every ConfigOpts shares.)
    """
    config_file = tmp_path / ('nova-%s.conf' % uuid.uuid4().hex[:8])
    config_file.write_text(
        '[drs]\nstate_path = %s\n'
        '[drs_coordination]\nbackend_url = %s\nleader_timeout = %s\n'
        'heartbeat_interval = %s\n'
        % (tmp_path, url, leader_timeout, heartbeat_interval))
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf(['--config-file', str(config_file)])
    return conf


@pytest.fixture
def group():
    """A group of its own for one test; its Redis keys are removed afterwards."""
    services.require('redis')
    name = 'nova-drs-test-%s' % uuid.uuid4().hex[:12]
    yield name
    client = redis.Redis(host='127.0.0.1', port=6379)
    keys = client.keys('*%s*' % name)
    if keys:
        client.delete(*keys)
    client.srem('_tooz_groups', name)


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


@pytest.fixture
def spawn(tmp_path):
    """Start a member subprocess; every one still running is killed at teardown."""
    processes = []

    def start(url, group, member_id):
        process = subprocess.Popen(
            [sys.executable, '-m', 'tests.unit.daemon.coordination_member',
             url, group, str(tmp_path), member_id],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
        process.stderr.close()


def wait_for_line(process, expected, timeout=15):
    """Read the member's output until it prints ``expected``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline().strip()
        if line == expected:
            return
        if not line and process.poll() is not None:
            break
    raise AssertionError('member did not print %r; stderr: %s'
                         % (expected, process.stderr.read() if process.poll() is not None
                            else '(still running)'))


def wait_for_leadership(member, timeout):
    """Call is_leader() like a cycle would until it wins; return seconds taken."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if member.is_leader():
            return time.monotonic() - started
        time.sleep(POLL)
    raise AssertionError('%s did not become leader within %.1f s'
                         % (member.member_id, timeout))


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


# -- Redis -------------------------------------------------------------------

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
    assert standby.members() == ['standby']


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


def test_unreachable_backend_fails_start_with_the_option_named(tmp_path):
    with socket.create_server(('127.0.0.1', 0)) as unused:
        port = unused.getsockname()[1]
    member = coordination.Coordinator(
        make_conf(tmp_path, 'redis://:s3cret@127.0.0.1:%d' % port), group='unused')

    with pytest.raises(exception.CoordinationError) as error:
        member.start()

    assert '[drs_coordination] backend_url' in str(error.value)
    assert 's3cret' not in str(error.value)
    assert not member.is_leader()


# -- single node (file) -----------------------------------------------------------

def test_file_backend_single_daemon_leads(tmp_path):
    with coordination.Coordinator(make_conf(tmp_path), member_id='solo') as member:
        assert member.is_leader()
        assert member.still_leader()
        assert str(member.fence_token()) == 'solo#1'
        assert os.path.exists(tmp_path / 'coordination' / 'nova-drs-loadbalancer-leader')


def test_second_daemon_on_the_same_node_refuses_to_start(tmp_path, spawn):
    group = coordination.GROUP
    first = spawn('', group, 'first')
    wait_for_line(first, 'leader')
    second = coordination.Coordinator(make_conf(tmp_path), member_id='second')

    with pytest.raises(exception.CoordinationError) as error:
        second.start()

    message = str(error.value)
    assert 'another nova-loadbalancer on this node' in message
    assert '[drs_coordination] backend_url' in message
    assert str(tmp_path / 'coordination') in message

    # The kernel releases the lock of a crashed daemon: a restart succeeds.
    first.send_signal(signal.SIGKILL)
    first.wait()
    with coordination.Coordinator(make_conf(tmp_path), member_id='second') as second:
        assert second.is_leader()


# -- configuration errors -------------------------------------------------------------

@pytest.mark.parametrize('url, expected', [
    ('foo://127.0.0.1', 'unknown scheme "foo"'),
    ('127.0.0.1:6379', 'unknown scheme ""'),
    ('mysql://root@127.0.0.1/drs', 'cannot confirm'),
    ('postgresql://127.0.0.1/drs', 'cannot confirm'),
    ('etcd3+http://127.0.0.1:2379', 'cannot confirm'),
])
def test_bad_backend_url_is_a_clear_config_error(tmp_path, url, expected):
    with pytest.raises(exception.ConfigError) as error:
        coordination.Coordinator(make_conf(tmp_path, url))

    assert '[drs_coordination] backend_url' in str(error.value)
    assert expected in str(error.value)


def test_password_is_not_shown_in_url_errors(tmp_path):
    with pytest.raises(exception.ConfigError) as error:
        coordination.Coordinator(make_conf(tmp_path, 'foo://user:s3cret@host'))

    assert 's3cret' not in str(error.value)
    assert 'foo://user:***@host' in str(error.value)


def test_config_errors_are_also_coordination_errors(tmp_path):
    # The daemon's startup handles both kinds with one except clause.
    with pytest.raises(exception.CoordinationError):
        coordination.Coordinator(make_conf(tmp_path, 'foo://host'))


def test_heartbeat_slower_than_half_the_timeout_is_refused(tmp_path):
    with pytest.raises(exception.ConfigError) as error:
        coordination.Coordinator(make_conf(tmp_path, leader_timeout=2,
                                           heartbeat_interval=1.5))

    assert '[drs_coordination] heartbeat_interval' in str(error.value)
    assert '[drs_coordination] leader_timeout' in str(error.value)


def test_out_of_range_leader_timeout_fails_validation(tmp_path):
    config_file = tmp_path / 'nova.conf'
    config_file.write_text('[drs_coordination]\nleader_timeout = 600\n')
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf(['--config-file', str(config_file)])

    with pytest.raises(exception.ConfigError) as error:
        drs_conf.validate(conf)

    assert '[drs_coordination] leader_timeout' in str(error.value)


def test_default_member_id_is_hostname_and_pid(tmp_path):
    member = coordination.Coordinator(make_conf(tmp_path))

    assert member.member_id == '%s-%d' % (socket.gethostname(), os.getpid())
