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

"""nova's own MonitorHandler loads ``cpu.drs`` once the .pth alias is active."""

import os
import types
import unittest

from nova.compute import monitors
import nova.conf

import nova_drs
from nova_drs.resources import monitor

PTH = os.path.join(os.path.dirname(os.path.dirname(nova_drs.__file__)),
                   'etc', 'nova-drs', 'nova_drs-monitor.pth')


class TestNovaLoadsDrsMonitor(unittest.TestCase):

    def setUp(self):
        # what site.py does with each line of a .pth file starting with "import"
        with open(PTH) as handle:
            for line in handle:
                if line.startswith('import'):
                    exec(line)  # noqa: S102
        self.addCleanup(nova.conf.CONF.clear_override, 'compute_monitors')

    def handler(self, enabled):
        nova.conf.CONF.set_override('compute_monitors', enabled)
        tracker = types.SimpleNamespace(driver=object(), compute_nodes={})
        return monitors.MonitorHandler(tracker)

    def test_cpu_drs_is_loaded_by_nova(self):
        loaded = self.handler(['cpu.drs']).monitors
        self.assertEqual([monitor.DrsMonitor], [type(m) for m in loaded])
        self.assertIsNone(loaded[0].plugins)  # plugins load on first period only

    def test_virt_driver_choice_still_works(self):
        loaded = self.handler(['cpu.virt_driver']).monitors
        self.assertEqual(['Monitor'], [type(m).__name__ for m in loaded])
