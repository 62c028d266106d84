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

"""Compute units (cu): the flavor extra spec shared by compute and scheduler."""

CU_EXTRA_SPEC = 'drs:cu'
CU_TOTAL_KEY = 'drs_cu_total'
CU_USED_KEY = 'drs_cu_used'
#: Comma-separated UUIDs of the instances counted in drs_cu_used.
CU_INSTANCES_KEY = 'drs_cu_instances'


def requested_cu(extra_specs):
    """Compute units a flavor asks for: ``drs:cu`` as a non-negative integer, 0 if unset.

    Raises ValueError naming the extra spec on any other value.
    """
    value = (extra_specs or {}).get(CU_EXTRA_SPEC)
    if value is None:
        return 0
    try:
        units = int(str(value).strip())
    except ValueError:
        raise ValueError('flavor extra spec %s=%r is not an integer'
                         % (CU_EXTRA_SPEC, value)) from None
    if units < 0:
        raise ValueError('flavor extra spec %s=%r is negative' % (CU_EXTRA_SPEC, value))
    return units

