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

"""nova-drs scheduler weighers.

Operators enable them next to nova's own::

    [filter_scheduler]
    weight_classes = nova.scheduler.weights.all_weighers,nova_drs.weights.drs_weighers

nova's weight loader accepts a mix of class paths and functions returning
classes. ``nova.scheduler.weights.all_weighers`` must be listed by that very
name: nova enables the soft-affinity and soft-anti-affinity server-group
policies only when ``weight_classes`` holds that literal string or the
affinity weighers' class paths (``nova.scheduler.utils.validate_weigher``).
"""

from nova.scheduler import weights as nova_weights
from oslo_log import log as logging

from nova_drs.weights.even_distribution import EvenDistributionWeigher
from nova_drs.weights.migrations import MigrationWeigher
from nova_drs.weights.power_saving import PowerSavingWeigher

LOG = logging.getLogger(__name__)

__all__ = ['EvenDistributionWeigher', 'MigrationWeigher', 'PowerSavingWeigher',
           'all_weighers', 'drs_weighers']


def drs_weighers():
    """nova-drs's weigher classes (for ``weight_classes``, after nova's)."""
    return [PowerSavingWeigher, EvenDistributionWeigher, MigrationWeigher]


def all_weighers():
    """Deprecated: nova's weigher classes plus nova-drs's.

    Configured alone it hides ``nova.scheduler.weights.all_weighers`` from
    nova's server-group check, so soft-affinity and soft-anti-affinity boots
    fail; kept so existing nova.conf files still load, with a warning.
    """
    LOG.warning('[filter_scheduler] weight_classes = nova_drs.weights.all_weighers is '
                'deprecated: nova refuses soft-affinity and soft-anti-affinity server '
                'groups with it; use weight_classes = '
                'nova.scheduler.weights.all_weighers,nova_drs.weights.drs_weighers')
    return nova_weights.all_weighers() + drs_weighers()
