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

"""Scaling a running server to another flavor: group ``[drs_scale]``."""

from oslo_config import cfg

scale_group = cfg.OptGroup(
    'drs_scale', title='nova-drs server scaling',
    help='CloudStack-style scaleVirtualMachine on top of nova\'s resize: in place '
         'when the current host has capacity, else on another host of the same '
         'cluster aggregate, else refused.')

scale_opts = [
    cfg.BoolOpt('enabled',
                default=False,
                help='Global switch of the scale_server action. Each cluster '
                     'aggregate must also carry the metadata drs_scale_enabled=true.'),
    cfg.BoolOpt('allow_scale_down',
                default=False,
                help='Whether a flavor with fewer vCPUs or less RAM than the '
                     'current one is accepted.'),
    cfg.IntOpt('scale_retry',
               default=2,
               min=0,
               max=10,
               help='How many times a failed resize step is retried before the '
                    'request fails and the server is reverted.'),
    cfg.StrOpt('scaler',
               default='resize',
               help='How a scale is carried out (stevedore namespace '
                    'nova_drs.scalers). "resize" is nova\'s cold resize: the '
                    'guest restarts. A hypervisor that can hot-plug vCPUs and '
                    'RAM can provide a scaler that scales in place live.'),
    cfg.IntOpt('step_timeout',
               default=600,
               min=10,
               max=86400,
               help='Seconds a resize may take to reach VERIFY_RESIZE before the '
                    'attempt counts as failed.'),
]


def list_opts():
    return [(scale_group, scale_opts)]
