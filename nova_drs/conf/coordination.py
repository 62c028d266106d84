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

"""High availability of nova-loadbalancer: group ``[drs_coordination]``.

Several daemons may run; a tooz backend elects the one that acts. Without a
backend a file lock under ``[drs] state_path`` allows one daemon per node.
"""

from oslo_config import cfg

coordination_group = cfg.OptGroup(
    'drs_coordination', title='nova-loadbalancer coordination',
    help='Leader election between nova-loadbalancer daemons, so that exactly '
         'one of them observes, decides and acts at a time.')

coordination_opts = [
    cfg.StrOpt('backend_url',
               default='',
               secret=True,
               help='tooz backend shared by every nova-loadbalancer daemon, '
                    'for example redis://HOST:6379, zookeeper://HOST:2181, '
                    'memcached://HOST:11211 or kubernetes://. Empty: single '
                    'node; a lock file under [drs] state_path lets only one '
                    'daemon run and a second one refuses to start. '
                    'mysql://, postgresql:// and etcd3+http:// are refused: '
                    'their tooz locks cannot confirm that the leader still '
                    'holds its lock, so two daemons could act at once.'),
    cfg.FloatOpt('heartbeat_interval',
                 default=5.0,
                 min=0.1,
                 max=30.0,
                 help='Seconds between two heartbeats that renew the leader '
                      'lock and membership in the backend. Must be at most '
                      'half of leader_timeout.'),
    cfg.IntOpt('leader_timeout',
               default=30,
               min=2,
               max=60,
               help='Seconds after which the lock of a leader that stopped '
                    'heartbeating (crash, network loss) expires in the backend; '
                    'a standby takes over at its next cycle, so a dead leader '
                    'is replaced within leader_timeout plus one daemon period. '
                    'Keep it at most the daemon period (60 s by default) so '
                    'failover stays within two periods. A leader that cannot '
                    'heartbeat stops acting at once.'),
    cfg.StrOpt('member_id',
               regex=r'^[A-Za-z0-9_.:@-]+$',
               help='Name of this daemon in the coordination group, shown in '
                    'logs and fence tokens. Default: HOSTNAME-PID. Must differ '
                    'between daemons.'),
]


def list_opts():
    return [(coordination_group, coordination_opts)]
