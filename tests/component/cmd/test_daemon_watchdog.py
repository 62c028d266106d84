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


def _leader(daemons, timeout):
    """The daemon that logs its leadership first, then the other one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, daemon in daemons.items():
            if any('%s is now the nova-loadbalancer leader' % name in line
                   for _when, line in list(daemon.lines)):
                return [(name, daemon)] + [(other, d) for other, d in daemons.items()
                                           if other != name]
        time.sleep(0.05)
    pytest.fail('no leader within %ds; logs:\n%s' % (
        timeout, '\n'.join(d.log()[-2000:] for d in daemons.values())), pytrace=False)


def test_hung_cycle_is_abandoned_and_the_standby_takes_over(tmp_path, silent_nova,
                                                              namespace):
    configs = {member: _daemon_config(tmp_path, silent_nova, namespace, member)
               for member in ('first', 'second')}
    subprocess.run([os.path.join(BIN, 'nova-drs-manage'), '--config-file', configs['first'],
                    'db', 'sync'], check=True, capture_output=True, cwd=REPO)
    # Both start at once, so the standby is up before the leader's cycle is
    # abandoned however slowly a loaded machine starts a daemon (a standby
    # started after the leader missed CYCLE_TIMEOUT twice under make test).
    daemons = {member: Daemon(config) for member, config in configs.items()}
    try:
        (leader_name, leader), (standby_name, standby) = _leader(daemons, 60)
        standby_since = standby.wait_for('%s started on' % standby_name, 60)
        assert 'as standby' in standby.log(), standby.log()
        # the leader's first cycle reached nova and hangs there
        deadline = time.monotonic() + 30
        while silent_nova.first_connection is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert silent_nova.first_connection is not None, leader.log()
        abandoned = leader.wait_for('abandoned; leadership released', 30)
        assert standby_since < abandoned
        assert abandoned - silent_nova.first_connection < CYCLE_TIMEOUT + 2, leader.log()
        took_over = standby.wait_for(
            '%s is now the nova-loadbalancer leader' % standby_name, 30)
        # at its next cycle: within one period of the release
        assert took_over - abandoned < PERIOD + 2, standby.log()
        assert '%s stops acting as nova-loadbalancer leader' % leader_name in leader.log()
        assert leader.process.poll() is None and standby.process.poll() is None
        # the first leader stands by while its abandoned cycle still hangs
        time.sleep(PERIOD + 1)
        assert ('%s is now the nova-loadbalancer leader (term 2)' % leader_name
                not in leader.log())
        assert 'the abandoned cycle has not returned yet' in leader.log(), leader.log()
    finally:
        for daemon in daemons.values():
            daemon.stop()
