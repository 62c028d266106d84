#!/usr/bin/env python3
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

"""Install nova_drs-monitor.pth into this Python's site-packages.

nova 34 only loads compute monitors whose entry point module sits under
``nova.compute.monitors.cpu``; the .pth file makes ``nova.compute.monitors.cpu.drs``
an import alias of ``nova_drs.resources.monitor`` at interpreter start,
without touching nova's files. Run it with the Python that runs nova-compute.
"""

import os
import shutil
import sysconfig

SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      'etc', 'nova-drs', 'nova_drs-monitor.pth')

if __name__ == '__main__':
    target = sysconfig.get_paths()['purelib']
    shutil.copy(SOURCE, target)
    print('installed %s into %s' % (os.path.basename(SOURCE), target))
