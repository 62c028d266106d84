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

"""The unit tier runs in a process eventlet has not monkey-patched, on every nova.

nova 33 and 34 patch only when their own test packages are imported; nova 32
(2025.2) patches on importing ``nova.api.openstack`` or ``nova.cmd``, which
the API unit tests do, and a patched pytest process then hangs the tests
that read a daemon's output in a thread (tests/unit/cmd/test_daemon_signals.py).
nova 32's own switch asks it not to patch, so the tier gets the process 33
and 34 give it. nova-drs's commands import neither module, and the
functional tier (nova's fixtures, patched on every release) is not affected.
"""

import importlib.metadata
import os

import pytest

if int(importlib.metadata.version('nova').split('.')[0]) < 33:
    os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', '1')
    # Now, before any test module: nova 32 then selects oslo.service's
    # threading backend, which a later import of nova.api.openstack or
    # nova.cmd selects again; a test that used oslo.service first would have
    # selected eventlet and that import would fail (BackendAlreadySelected).
    from nova import monkey_patch
    monkey_patch.patch()


@pytest.fixture
def database(tmp_path):
    """A migrated SQLite DRS database of the test's own, disposed after it: the
    storage most unit tests run on (a test module that needs another defines
    its own ``database``, or one on top of this one that adds its hosts)."""
    # Imported here, not above: nova 32's patching switch must come first.
    from nova_drs.db import api
    from nova_drs.db import migration

    database = api.Database('sqlite:///%s' % (tmp_path / 'drs.sqlite'))
    migration.sync(database)
    yield database
    database.dispose()
