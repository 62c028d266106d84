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

"""The unit tier: no service, no shellcheck, systemd-analyze or sshd
(tests/component has those; tests/unit/tree/test_unit_isolation.py).

It runs in a process eventlet has not monkey-patched (tests/unpatched.py).
"""

import pytest

from tests import unpatched

unpatched.keep_eventlet_off()


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
