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


"""The functional tier: nova's services in one eventlet-patched process.

nova patches when its own test packages are imported, but pytest imports a test
module's first lines before that, and ``nova_drs.db`` imports oslo.db. oslo.db's
enginefacade keeps each context's open transaction in a ``threading.local``
subclass it defines at import time: made before the patch, that local is per OS
thread, so every greenthread of the process shares it, and a compute saving its
node while another greenthread reads with the same context fails with "Can't
upgrade a READER transaction to a WRITER mid-transaction" (a forced-host build
then goes to ERROR: seen in 2 of 43 runs of test_even_distribution.py). So the
package patches first, the way ``nova/tests/functional/__init__.py`` does, and
``base.py`` refuses to run if oslo.db was imported before it anyway.
"""

from nova import monkey_patch

monkey_patch.patch()
