"""Validator of the ``drs:cu`` flavor extra spec for nova-api.

Registered under nova's ``nova.api.extra_spec_validators`` entry point
namespace, so ``openstack flavor set --property drs:cu=lots`` is refused
with a 400 naming the extra spec instead of breaking scheduling later.
"""

from nova.api.validation.extra_specs import base

from nova_drs.resources import units

EXTRA_SPEC_VALIDATORS = [
    base.ExtraSpecValidator(
        name=units.CU_EXTRA_SPEC,
        description=(
            'Compute units (cu) an instance of this flavor needs: CPU '
            'performance in the unit hosts declare with [drs_resources] '
            'compute_units. Hosts without that many free cu are filtered out '
            'by nova-drs ResourceConsumersFilter with the compute_units consumer.'
        ),
        value={'type': int, 'min': 0},
    ),
]


def register():
    return EXTRA_SPEC_VALIDATORS
