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

"""The unit and component tiers run in a process eventlet has not monkey-patched.

nova 33 and 34 patch only when their own test packages are imported; nova 32
(2025.2) patches on importing ``nova.api.openstack`` or ``nova.cmd``, which
the API unit tests do, and a patched pytest process then hangs the tests
that read a daemon's output in a thread (tests/unit/cmd/test_daemon_signals.py,
tests/component/cmd/test_daemon_watchdog.py). nova 32's own switch asks it
not to patch, so these tiers get the process 33 and 34 give them. nova-drs's
commands import neither module, and the functional tier (nova's fixtures,
patched on every release) does not call this.
"""

import importlib.metadata
import os


def keep_eventlet_off():
    """Called by the tiers' conftest.py, before any test module is imported."""
    if int(importlib.metadata.version('nova').split('.')[0]) < 33:
        os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', '1')
        # Now, before any test module: nova 32 then selects oslo.service's
        # threading backend, which a later import of nova.api.openstack or
        # nova.cmd selects again; a test that used oslo.service first would have
        # selected eventlet and that import would fail (BackendAlreadySelected).
        from nova import monkey_patch
        monkey_patch.patch()
