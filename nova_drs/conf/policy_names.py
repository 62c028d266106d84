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

"""The DRS policy and automation-level names, one list for two readers.

``[loadbalancer] default_policy`` offers them as choices and aggregate
metadata (nova_drs.aggregate_keys, nova_drs.cluster_policy) accepts them as
values. They live here because the configuration package is the bottom
layer: it imports nothing of nova_drs outside itself, so the metadata
modules import the names from it rather than the other way round.
"""

NONE = 'none'
EVEN_DISTRIBUTION = 'even_distribution'
POWER_SAVING = 'power_saving'
POLICIES = (NONE, EVEN_DISTRIBUTION, POWER_SAVING)
AUTOMATION_LEVELS = ('manual', 'automatic')
