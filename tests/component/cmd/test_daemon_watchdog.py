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

"""A nova that never answers: every cycle bounded.

The stand-in nova is tests/unit/cmd/test_daemon_watchdog.py's loopback
socket that never writes a byte (a hung nova-api behind a load balancer).
Two real ``nova-loadbalancer`` processes share real Redis (a tooz namespace
of their own) and a SQLite DRS database: the leader's cycle hangs, the
watchdog abandons it after ``[loadbalancer] cycle_timeout`` and releases the
leadership, and the standby takes over.
"""

import os
import subprocess
import threading
import time

import pytest

from tests.unit.cmd import test_daemon_watchdog as unit_watchdog
from tests.unit.cmd.test_daemon_signals import BIN
from tests.unit.cmd.test_daemon_signals import REPO

#: Long enough for the standby process to start while the leader's cycle hangs.
CYCLE_TIMEOUT = 10
PERIOD = 5
silent_nova = unit_watchdog.silent_nova


@pytest.fixture
def namespace(redis_name):
    return redis_name


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
