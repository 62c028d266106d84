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

"""A nova that never answers: every request bounded, every cycle bounded.

The stand-in nova is a loopback socket that accepts connections and never
writes a byte (a hung nova-api behind a load balancer). Two real
``nova-loadbalancer`` processes share real Redis (a tooz namespace of their
own) and a SQLite DRS database: the leader's cycle hangs, the watchdog
abandons it after ``[loadbalancer] cycle_timeout`` and releases the
leadership, and the standby takes over.
"""

import os
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
from nova_drs.cmd import loadbalancer as cmd
from nova_drs.conf import loadbalancer as lb_conf
from tests import services

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)
#: Long enough for the standby process to start while the leader's cycle hangs.
CYCLE_TIMEOUT = 10
PERIOD = 5


class SilentNova:
    """Accepts every connection and never answers."""

    def __init__(self):
        self.listener = socket.create_server(('127.0.0.1', 0))
        self.port = self.listener.getsockname()[1]
        self.connections = []
        self.first_connection = None
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            if self.first_connection is None:
                self.first_connection = time.monotonic()
            self.connections.append(connection)

    def close(self):
        self.listener.close()
        for connection in self.connections:
            connection.close()


@pytest.fixture
def silent_nova():
    nova = SilentNova()
    yield nova
    nova.close()


def _conf(tmp_path, silent_nova, timeout=None):
    path = tmp_path / ('nova-%s.conf' % uuid.uuid4().hex[:8])
    path.write_text(
        '[drs]\nstate_path = %s\n'
        '[drs_auth]\nauth_type = admin_token\nendpoint = http://127.0.0.1:%d\n'
        'token = secret\n%s' % (tmp_path, silent_nova.port,
                                'timeout = %d\n' % timeout if timeout else ''))
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf(['--config-file', str(path)])
    return conf


def test_every_nova_request_has_a_timeout_by_default(tmp_path, silent_nova):
    conf = _conf(tmp_path, silent_nova)
    assert conf.drs_auth.timeout == lb_conf.REQUEST_TIMEOUT


def test_a_nova_that_never_answers_fails_the_request_in_time(tmp_path, silent_nova):
    nova = cmd.nova_from_conf(_conf(tmp_path, silent_nova, timeout=1))
    started = time.monotonic()
    with pytest.raises(exception.NovaUnavailable) as caught:
        nova.compute_services()
    assert time.monotonic() - started < 5
    assert caught.value.status is None          # no answer: nova's fault, not a host's
    assert silent_nova.connections, 'the request never reached the stand-in'


def test_the_daemons_connection_takes_the_retry_options_of_drs_auth(tmp_path, silent_nova):
    """[drs_auth]'s retry options reach the daemon's client, which sets them
    on every proxy (keystoneauth Adapter) it uses: a 503 is asked again twice;
    a request that timed out is not, on every openstacksdk release (those of
    2025.2 and 2026.1 ask again once by default, doubling a hung nova-api's
    cost). The twin proves both in virtual time on each release's
    openstacksdk (tests/unit/sim/test_twin.py)."""
    nova = cmd.nova_from_conf(_conf(tmp_path, silent_nova))
    assert nova._retries == {'connect_retries': 0, 'connect_retry_delay': None,
                             'status_code_retries': 2, 'status_code_retry_delay': None,
                             'retriable_status_codes': None}


@pytest.fixture
def namespace():
    services.require('redis')
    name = 'nova-drs-watchdog-%s' % uuid.uuid4().hex[:12]
    yield name
    client = redis.Redis(host='127.0.0.1', port=6379)
    keys = client.keys('%s*' % name)
    if keys:
        client.delete(*keys)


class Daemon:
    """One real nova-loadbalancer process and its log lines."""

    def __init__(self, config):
        self.process = subprocess.Popen(
            [os.path.join(BIN, 'nova-loadbalancer'), '--config-file', config],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line))

    def wait_for(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for when, line in list(self.lines):
                if text in line:
                    return when
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail('%r not logged within %ds; log:\n%s' % (
            text, timeout, self.log()[-4000:]), pytrace=False)

    def log(self):
        return ''.join(line for _when, line in self.lines)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(5)
        self.process.stdout.close()


def _daemon_config(tmp_path, silent_nova, namespace, member):
    path = str(tmp_path / ('%s.conf' % member))
    with open(path, 'w') as conf:
        conf.write(
            '[drs]\nstate_path = %s\n'
            '[drs_database]\nconnection = sqlite:///%s/drs.sqlite\n'
            '[drs_auth]\nauth_type = admin_token\nendpoint = http://127.0.0.1:%d\n'
            'token = secret\n'
            '[drs_coordination]\nbackend_url = redis://127.0.0.1:6379?namespace=%s\n'
            'member_id = %s\nleader_timeout = 2\nheartbeat_interval = 0.5\n'
            '[loadbalancer]\nperiod = %d\ncycle_timeout = %d\n'
            % (tmp_path, tmp_path, silent_nova.port, namespace, member, PERIOD,
               CYCLE_TIMEOUT))
    return path


def test_hung_cycle_is_abandoned_and_the_standby_takes_over(tmp_path, silent_nova,
                                                              namespace):
    first_config = _daemon_config(tmp_path, silent_nova, namespace, 'first')
    second_config = _daemon_config(tmp_path, silent_nova, namespace, 'second')
    subprocess.run([os.path.join(BIN, 'nova-drs-manage'), '--config-file', first_config,
                    'db', 'sync'], check=True, capture_output=True, cwd=REPO)
    first = Daemon(first_config)
    second = None
    try:
        first.wait_for('first is now the nova-loadbalancer leader', 30)
        second = Daemon(second_config)
        standby_since = second.wait_for('as standby', CYCLE_TIMEOUT)
        # the leader's first cycle reached nova and hangs there
        deadline = time.monotonic() + 30
        while silent_nova.first_connection is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert silent_nova.first_connection is not None, first.log()
        abandoned = first.wait_for('abandoned; leadership released', 30)
        assert standby_since < abandoned
        assert abandoned - silent_nova.first_connection < CYCLE_TIMEOUT + 2, first.log()
        took_over = second.wait_for('second is now the nova-loadbalancer leader', 30)
        # at its next cycle: within one period of the release
        assert took_over - abandoned < PERIOD + 2, second.log()
        assert 'first stops acting as nova-loadbalancer leader' in first.log()
        assert first.process.poll() is None and second.process.poll() is None
        # the first daemon stands by while its abandoned cycle still hangs
        time.sleep(PERIOD + 1)
        assert 'first is now the nova-loadbalancer leader (term 2)' not in first.log()
        assert 'the abandoned cycle has not returned yet' in first.log(), first.log()
    finally:
        first.stop()
        if second is not None:
            second.stop()
