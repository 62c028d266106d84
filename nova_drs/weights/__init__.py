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

Operators enable them like nova's own::

    [filter_scheduler]
    weight_classes = nova_drs.weights.all_weighers
"""

from nova.scheduler import weights as nova_weights

from nova_drs.weights.even_distribution import EvenDistributionWeigher
from nova_drs.weights.migrations import MigrationWeigher
from nova_drs.weights.power_saving import PowerSavingWeigher

__all__ = ['EvenDistributionWeigher', 'MigrationWeigher', 'PowerSavingWeigher',
           'all_weighers']


def all_weighers():
    """nova's weigher classes plus nova-drs's (for ``weight_classes``)."""
    return nova_weights.all_weighers() + [
        PowerSavingWeigher, EvenDistributionWeigher, MigrationWeigher]
