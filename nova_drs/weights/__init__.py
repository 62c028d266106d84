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
