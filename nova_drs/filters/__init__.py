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

"""nova-drs scheduler filters.

Operators enable them like nova's own::

    [filter_scheduler]
    available_filters = nova_drs.filters.all_filters
    enabled_filters = ...,SuspendStateFilter,MigrationLimitFilter,OvercommitCoreFilter,
                      OvercommitRamFilter,ResourceConsumersFilter
"""

from nova.scheduler import filters as nova_filters

from nova_drs.filters.migration_limit import MigrationLimitFilter
from nova_drs.filters.overcommit_core import OvercommitCoreFilter
from nova_drs.filters.overcommit_ram import OvercommitRamFilter
from nova_drs.filters.suspend_state import SuspendStateFilter
from nova_drs.resources.scheduler import ResourceConsumersFilter
from nova_drs.scale.filter import ScaleTargetFilter

__all__ = ['MigrationLimitFilter', 'OvercommitCoreFilter', 'OvercommitRamFilter',
           'ResourceConsumersFilter', 'ScaleTargetFilter', 'SuspendStateFilter',
           'all_filters']


def all_filters():
    """nova's filter classes plus nova-drs's (for ``available_filters``)."""
    return nova_filters.all_filters() + [
        SuspendStateFilter, MigrationLimitFilter, OvercommitCoreFilter,
        OvercommitRamFilter, ResourceConsumersFilter, ScaleTargetFilter]
