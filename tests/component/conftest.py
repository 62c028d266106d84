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

"""The component tier: tests against the real components operators run.

MariaDB, PostgreSQL, Redis and RabbitMQ on loopback (tests/services.py), the
BMC simulators and sshd (tests/peers.py), shellcheck and systemd-analyze; no
nova service. ``make component`` starts what is missing. Like the unit tier it
runs in a process eventlet has not monkey-patched (tests/unpatched.py).
"""

from tests import unpatched

unpatched.keep_eventlet_off()

import pytest  # noqa: E402  (after the eventlet switch, as every import here)

from tests import services  # noqa: E402


@pytest.fixture
def redis_name():
    """A tooz group or namespace of this test's own on Redis, its keys
    removed afterwards."""
    with services.redis_name('nova-drs-test') as name:
        yield name
