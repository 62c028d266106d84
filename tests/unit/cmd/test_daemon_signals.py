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

"""``nova-loadbalancer`` as a real process: SIGTERM and SIGHUP (oslo.service).

The daemon talks to a local HTTP endpoint that answers every request slowly
with 503, so each cycle takes a known time and ends "skipped" (nova
unavailable): what is tested is the process, not the plan. The DRS database
is a real SQLite file synced by ``nova-drs-manage db sync``. The collector,
which listens on RabbitMQ, is in tests/component/cmd/test_daemon_signals.py.
"""

import http.server
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)


class SlowNova(http.server.ThreadingHTTPServer):
    """Every request waits ``delay`` seconds, then gets a 503."""

    daemon_threads = True

    def __init__(self, delay):
        self.delay = delay
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.requests += 1
                time.sleep(outer.delay)
                body = b'{"message": "unavailable"}'
                self.send_response(503)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass                  # the daemon stopped waiting

        super().__init__(('127.0.0.1', 0), Handler)


@pytest.fixture
def nova():
    server = SlowNova(delay=0.0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _config(path, nova, period, graceful=20):
    state = os.path.dirname(path)
    with open(path, 'w') as conf:
        conf.write(
            '[DEFAULT]\ngraceful_shutdown_timeout = %d\n'
            '[drs]\nstate_path = %s\n'
            '[drs_database]\nconnection = sqlite:///%s/drs.sqlite\n'
            '[drs_auth]\nauth_type = admin_token\nendpoint = http://127.0.0.1:%d\n'
            'token = secret\n'
            '[loadbalancer]\nperiod = %d\n' % (graceful, state, state,
                                               nova.server_address[1], period))


@pytest.fixture
def daemon(tmp_path, nova):
    config = str(tmp_path / 'nova-drs.conf')
    _config(config, nova, period=5)
    subprocess.run([os.path.join(BIN, 'nova-drs-manage'), '--config-file', config,
                    'db', 'sync'], check=True, capture_output=True, cwd=REPO)
    process = subprocess.Popen(
        [os.path.join(BIN, 'nova-loadbalancer'), '--config-file', config],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []

    def reader():
        for line in process.stdout:
            lines.append(line)

    process.reader = threading.Thread(target=reader, daemon=True)
    process.reader.start()
    process.lines = lines
    process.config = config
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


def _wait_for(process, text, timeout=30, after=0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for index, line in enumerate(process.lines[after:], after):
            if text in line:
                return index
        if process.poll() is not None:
            break
        time.sleep(0.1)
    pytest.fail('%r not logged within %ds; log:\n%s' % (
        text, timeout, ''.join(process.lines[-30:])), pytrace=False)


def test_sigterm_lets_the_running_cycle_finish_then_exits_0(daemon, nova):
    _wait_for(daemon, 'cycle: ')
    nova.delay = 3.0                      # the next cycle waits 3 s on its first answer
    seen = nova.requests
    deadline = time.monotonic() + 15
    while nova.requests == seen and time.monotonic() < deadline:
        time.sleep(0.05)
    assert nova.requests > seen, 'no second cycle started'
    cycles_before = sum('cycle: ' in line for line in daemon.lines)
    sent = time.monotonic()
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(timeout=20) == 0
    daemon.reader.join(5)
    log = ''.join(daemon.lines)
    # the cycle in progress ran to its end, then no other started
    assert sum('cycle: ' in line for line in daemon.lines) == cycles_before + 1, log
    assert time.monotonic() - sent >= 1.0, log
    assert 'stopped between two cycles' in log
    assert 'Traceback' not in log, log


def test_sigterm_past_graceful_shutdown_timeout_ends_the_process(tmp_path, nova):
    config = str(tmp_path / 'nova-drs.conf')
    _config(config, nova, period=5, graceful=1)
    subprocess.run([os.path.join(BIN, 'nova-drs-manage'), '--config-file', config,
                    'db', 'sync'], check=True, capture_output=True, cwd=REPO)
    nova.delay = 30.0
    process = subprocess.Popen(
        [os.path.join(BIN, 'nova-loadbalancer'), '--config-file', config],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while nova.requests == 0 and time.monotonic() < deadline:
            time.sleep(0.05)              # the first cycle waits on a 30 s answer
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=15)
        assert time.monotonic() - sent < 10
        assert code == -signal.SIGALRM     # oslo.service's graceful_shutdown_timeout
        assert 'stopped between two cycles' not in process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()


def test_sighup_rereads_the_options_for_the_next_cycle(daemon, nova):
    _wait_for(daemon, 'cycle: ')
    _config(daemon.config, nova, period=7)
    with open(daemon.config, 'a') as conf:
        conf.write('automation = manual\n')
    mark = len(daemon.lines)
    daemon.send_signal(signal.SIGHUP)
    index = _wait_for(daemon, 'configuration reloaded', after=mark, timeout=20)
    assert 'period 7s, automation manual' in daemon.lines[index]
    assert daemon.poll() is None
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(timeout=20) == 0


def test_sighup_with_an_unusable_value_keeps_the_previous_options(daemon, nova):
    _wait_for(daemon, 'cycle: ')
    with open(daemon.config, 'a') as conf:
        conf.write('policy = nosuch\n')
    mark = len(daemon.lines)
    daemon.send_signal(signal.SIGHUP)
    _wait_for(daemon, 'not usable, keeping the previous one', after=mark, timeout=20)
    _wait_for(daemon, 'cycle: ', after=mark, timeout=20)
    assert daemon.poll() is None
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(timeout=20) == 0


