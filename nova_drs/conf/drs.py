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

"""General nova-drs options: group ``[drs]``."""

from oslo_config import cfg

drs_group = cfg.OptGroup(
    'drs', title='nova-drs general options',
    help='Options shared by every nova-drs component (scheduler plugins, '
         'compute monitor, loadbalancer daemon, API filter).')

drs_opts = [
    cfg.StrOpt('state_path',
               default='/var/lib/nova-drs',
               help='Directory where nova-drs keeps local state: the embedded '
                    'SQLite database (when [drs_database] connection is not '
                    'set) and the single-node coordination lock file.'),
]


def list_opts():
    return [(drs_group, drs_opts)]
