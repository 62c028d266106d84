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

"""A nova that never answers: every request bounded.

The stand-in nova is a loopback socket that accepts connections and never
writes a byte (a hung nova-api behind a load balancer). Every cycle bounded,
with two real ``nova-loadbalancer`` processes on a real Redis, is in
tests/component/cmd/test_daemon_watchdog.py.
"""

import socket
import threading
import time
import uuid

from oslo_config import cfg
import pytest

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.cmd import loadbalancer as cmd
from nova_drs.conf import loadbalancer as lb_conf


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


