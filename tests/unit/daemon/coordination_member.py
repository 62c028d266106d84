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

"""A nova-loadbalancer stand-in for the coordination tests.

Runs for leader like the daemon does, prints "leader" or "standby" whenever
that changes, and never stops cleanly: the tests end it with SIGKILL to play
a crashed daemon.

    python -m tests.unit.daemon.coordination_member URL GROUP STATE_PATH MEMBER_ID
"""

import sys
import time

from oslo_config import cfg

from nova_drs import conf as drs_conf
from nova_drs.daemon import coordination

LEADER_TIMEOUT = 2
HEARTBEAT_INTERVAL = 0.5


def main(url, group, state_path, member_id):
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf([])
    conf.set_override('state_path', state_path, group='drs')
    conf.set_override('backend_url', url, group='drs_coordination')
    conf.set_override('leader_timeout', LEADER_TIMEOUT, group='drs_coordination')
    conf.set_override('heartbeat_interval', HEARTBEAT_INTERVAL, group='drs_coordination')
    coordinator = coordination.Coordinator(conf, member_id=member_id, group=group)
    coordinator.start()
    previous = None
    while True:
        role = 'leader' if coordinator.is_leader() else 'standby'
        if role != previous:
            print(role, flush=True)
            previous = role
        time.sleep(0.1)


if __name__ == '__main__':
    main(*sys.argv[1:])
