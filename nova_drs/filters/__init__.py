"""nova-drs scheduler filters.

Operators enable them like nova's own::

    [filter_scheduler]
    available_filters = nova_drs.filters.all_filters
    enabled_filters = ...,SuspendStateFilter,OvercommitCoreFilter,OvercommitRamFilter,
                      ResourceConsumersFilter
"""

from nova.scheduler import filters as nova_filters

from nova_drs.filters.overcommit_core import OvercommitCoreFilter
from nova_drs.filters.overcommit_ram import OvercommitRamFilter
from nova_drs.filters.suspend_state import SuspendStateFilter
from nova_drs.resources.scheduler import ResourceConsumersFilter
from nova_drs.scale.filter import ScaleTargetFilter

__all__ = ['OvercommitCoreFilter', 'OvercommitRamFilter', 'ResourceConsumersFilter',
           'ScaleTargetFilter', 'SuspendStateFilter', 'all_filters']


def all_filters():
    """nova's filter classes plus nova-drs's (for ``available_filters``)."""
    return nova_filters.all_filters() + [
        SuspendStateFilter, OvercommitCoreFilter, OvercommitRamFilter,
        ResourceConsumersFilter, ScaleTargetFilter]
