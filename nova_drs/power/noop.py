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

"""Power driver for dry runs: accepts every call and changes nothing."""

from oslo_log import log as logging

from nova_drs.power import base

LOG = logging.getLogger(__name__)


class NoopDriver(base.PowerDriver):
    """Suspend and wake succeed without touching the host; status is 'unknown'.

    Lets the daemon run its whole cycle (disable, migrate, "suspend") against
    hosts nobody may power off; the daemon then relies on nova's service
    state alone. No options.
    """

    NAME = 'noop'
    MODES = base.MODES

    def _suspend(self, target):
        LOG.info('Dry run: host %s would be suspended (mode %s)', target.name, target.mode)

    def _wake(self, target):
        LOG.info('Dry run: host %s would be woken', target.name)

    def _status(self, target):
        return base.UNKNOWN
