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

"""Makes the monitor importable as ``nova.compute.monitors.cpu.drs``.

nova's ``MonitorHandler.check_enabled_monitor`` derives a monitor's
namespace from the *module path* of its entry point target and looks it up
in a dict that only knows ``nova.compute.monitors.cpu``: any out-of-tree
target (``nova_drs....:DrsMonitor``) raises KeyError and is never loaded.
So the entry point names ``nova.compute.monitors.cpu.drs:DrsMonitor`` and
this import finder resolves that one name to ``nova_drs.resources.monitor``,
without touching nova's files or code. It is installed at interpreter
start by ``nova_drs-monitor.pth`` (see setup.cfg), or by ``install()``.
"""

import importlib
import importlib.abc
import importlib.util
import sys

ALIASES = {'nova.compute.monitors.cpu.drs': 'nova_drs.resources.monitor'}


class _AliasLoader(importlib.abc.Loader):

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        """The target module is already executed."""


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds only the names in ALIASES; costs nothing for any other import."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in ALIASES:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(ALIASES[fullname]))


def install(**extra):
    """Install the finder once; ``extra`` maps more alias names to modules (tests)."""
    ALIASES.update(extra)
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(AliasFinder())
