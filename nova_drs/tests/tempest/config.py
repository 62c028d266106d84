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

"""Tempest options of the nova-drs plugin: group ``[nova_drs]``."""

from oslo_config import cfg

group = cfg.OptGroup('nova_drs', title='nova-drs tempest tests')

opts = [
    cfg.StrOpt('power_driver', default='',
               help='Power driver set on a host before the suspend/wake scenario '
                    '(a name in nova_drs.power_drivers). Empty: the scenario is skipped, '
                    'since suspending a host of a shared cloud needs operator consent.'),
    cfg.StrOpt('power_options', default='{}',
               help='JSON object of the power driver\'s per-host options; '
                    '"{host}" in it is replaced by the host\'s name.'),
    cfg.StrOpt('power_mode', default='off', choices=['off', 's3'],
               help='Power mode set with the driver.'),
    cfg.StrOpt('busy_metadata', default='',
               help='JSON object of server metadata that makes a server busy on the '
                    'cloud under test (the mini-cloud\'s trace driver reads drs_trace*); '
                    '"{now}" in it is replaced by the unix time. Empty: the daemon-driven '
                    'consolidation scenario is skipped.'),
    cfg.IntOpt('state_timeout', default=300, min=10,
               help='Seconds a host may take to reach suspended or active again.'),
]
