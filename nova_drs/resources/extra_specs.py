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

"""Validators of the ``drs:cu`` and ``drs:automation`` flavor extra specs for nova-api.

Registered under nova's ``nova.api.extra_spec_validators`` entry point
namespace, so ``openstack flavor set --property drs:cu=lots`` is refused
with a 400 naming the extra spec instead of breaking scheduling later.
"""

from nova.api.validation.extra_specs import base

from nova_drs import opt_out
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
    base.ExtraSpecValidator(
        name=opt_out.KEY,
        description=(
            'Per-server opt-out of nova-drs (as vSphere\'s per-VM automation '
            'level): "disabled" keeps servers of this flavor where they are '
            '(never migrated by nova-loadbalancer, their host never suspended '
            'nor emptied); "manual" lets them move only in plans an admin '
            'approves. Server metadata drs:automation overrides it.'
        ),
        value={'type': str, 'enum': list(opt_out.LEVELS)},
    ),
]


def register():
    return EXTRA_SPEC_VALIDATORS
