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

"""Leader election of nova-loadbalancer: the file backend, and backend errors.

The file backend in a temp dir; a crash is a real one: a member subprocess
killed with SIGKILL, so it neither releases its lock nor leaves the group.
Election on a real Redis is in tests/component/daemon/test_coordination.py,
which uses the helpers here.
"""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.daemon import coordination
from tests import config_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
LEADER_TIMEOUT = 2  # seconds; the member subprocess uses the same values
HEARTBEAT_INTERVAL = 0.5


def make_conf(tmp_path, url='', leader_timeout=LEADER_TIMEOUT,
              heartbeat_interval=HEARTBEAT_INTERVAL):
    """Options from a config file, as an operator sets them.

    (set_override would leak: it is stored on the module-level OptGroup that
    every ConfigOpts shares.)
    """
    return config_files.load(
        tmp_path, '[drs]\nstate_path = %s\n'
        '[drs_coordination]\nbackend_url = %s\nleader_timeout = %s\n'
        'heartbeat_interval = %s\n' % (tmp_path, url, leader_timeout, heartbeat_interval))


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


# -- unreachable backend ----------------------------------------------------

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
    conf = config_files.load(tmp_path, '[drs_coordination]\nleader_timeout = 600\n')

    with pytest.raises(exception.ConfigError) as error:
        drs_conf.validate(conf)

    assert '[drs_coordination] leader_timeout' in str(error.value)


def test_default_member_id_is_hostname_and_pid(tmp_path):
    member = coordination.Coordinator(make_conf(tmp_path))

    assert member.member_id == '%s-%d' % (socket.gethostname(), os.getpid())
