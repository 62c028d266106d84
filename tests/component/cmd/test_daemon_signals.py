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

"""``nova-drs-collector`` as a real process on the real RabbitMQ: SIGTERM.

nova-loadbalancer's SIGTERM and SIGHUP, which need no service, are in
tests/unit/cmd/test_daemon_signals.py.
"""

import os
import signal
import subprocess
import time

import pytest

from tests import services
from tests.unit.cmd.test_daemon_signals import BIN
from tests.unit.cmd.test_daemon_signals import REPO

#: The bound on a SIGTERM'd collector's exit: a third of oslo.service's
#: default ``graceful_shutdown_timeout`` (60 s), which it must not wait out.
#: Idle, it exits within 2.5 s; 7.4 s was seen with two mini-clouds starting
#: beside the component tier on 2 cores.
PROMPT_EXIT_S = 20


@pytest.mark.parametrize('grace', [None, 1])
def test_collector_exits_cleanly_and_promptly_on_sigterm(tmp_path, grace):
    """The collector listens on RabbitMQ (tests/services.py starts it); it
    stops without waiting out ``graceful_shutdown_timeout``, and a short one
    still ends in a clean exit, not in oslo.service's SIGALRM."""
    services.require('rabbitmq')
    config = str(tmp_path / 'nova-drs.conf')
    with open(config, 'w') as conf:
        if grace is not None:
            conf.write('[DEFAULT]\ngraceful_shutdown_timeout = %d\n' % grace)
        conf.write('[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n'
                   '[drs]\nstate_path = %s\n'
                   '[drs_database]\nconnection = sqlite:///%s/drs.sqlite\n'
                   '[oslo_messaging_notifications]\ndriver = messagingv2\n'
                   % (tmp_path, tmp_path))
    subprocess.run([os.path.join(BIN, 'nova-drs-manage'), '--config-file', config,
                    'db', 'sync'], check=True, capture_output=True, cwd=REPO)
    process = subprocess.Popen(
        [os.path.join(BIN, 'nova-drs-collector'), '--config-file', config],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if 'listening on topic' in line:
                break
        assert process.poll() is None, ''.join(lines)
        time.sleep(2)
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        rest = process.stdout.read()
        assert process.wait(timeout=30) == 0, rest
        assert time.monotonic() - sent < PROMPT_EXIT_S
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
