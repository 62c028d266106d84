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

"""Failover time of nova-loadbalancer leader election, on a real backend.

    .venv/bin/python benchmarks/coordination_failover.py [--url redis://127.0.0.1:6379]
        [--leader-timeout 30] [--heartbeat-interval 5] [--period 60] [--runs 1]

Crash: a leader subprocess (a real Coordinator, heartbeating) is killed with
SIGKILL, so it neither releases its lock nor leaves the group; a standby in
this process calls is_leader() every 0.1 s and the time from the kill to its
takeover is measured. Clean stop: the leader calls stop() and the standby's
next is_leader() is timed. The daemon calls is_leader() once per period, so
its worst-case failover after a crash is the takeover time plus one period;
that figure is compared with the two-period bound of the HA requirement.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from oslo_config import cfg

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nova_drs import conf as drs_conf  # noqa: E402
from nova_drs.daemon import coordination  # noqa: E402

POLL = 0.1


def make_conf(state_path, url, leader_timeout, heartbeat_interval):
    config_file = os.path.join(state_path, 'nova-%s.conf' % uuid.uuid4().hex[:8])
    with open(config_file, 'w') as handle:
        handle.write('[drs]\nstate_path = %s\n[drs_coordination]\nbackend_url = %s\n'
                     'leader_timeout = %s\nheartbeat_interval = %s\n'
                     % (state_path, url, leader_timeout, heartbeat_interval))
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf(['--config-file', config_file])
    return conf


def run_member(state_path, url, group, leader_timeout, heartbeat_interval):
    """Subprocess mode: lead, report it, then run cycles until killed."""
    conf = make_conf(state_path, url, leader_timeout, heartbeat_interval)
    member = coordination.Coordinator(conf, member_id='doomed', group=group)
    member.start()
    reported = False
    while True:
        if member.is_leader() and not reported:
            print('leader', flush=True)
            reported = True
        time.sleep(POLL)


def time_crash_takeover(args, state_path, group):
    doomed = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), 'member', state_path, args.url, group,
         str(args.leader_timeout), str(args.heartbeat_interval)],
        stdout=subprocess.PIPE, text=True)
    try:
        if doomed.stdout.readline().strip() != 'leader':
            raise SystemExit('the leader subprocess did not become leader')
        conf = make_conf(state_path, args.url, args.leader_timeout, args.heartbeat_interval)
        with coordination.Coordinator(conf, member_id='standby', group=group) as standby:
            if standby.is_leader():
                raise SystemExit('two leaders at once: the benchmark is invalid')
            doomed.send_signal(signal.SIGKILL)
            doomed.wait()
            killed = time.monotonic()
            while not standby.is_leader():
                time.sleep(POLL)
            return time.monotonic() - killed
    finally:
        if doomed.poll() is None:
            doomed.kill()
        doomed.wait()


def time_clean_handover(args, state_path, group):
    conf = make_conf(state_path, args.url, args.leader_timeout, args.heartbeat_interval)
    leader = coordination.Coordinator(conf, member_id='leaving', group=group)
    leader.start()
    with coordination.Coordinator(conf, member_id='standby', group=group) as standby:
        leader.stop()
        stopped = time.monotonic()
        if not standby.is_leader():
            raise SystemExit('the standby did not take over at its next cycle')
        return time.monotonic() - stopped


def main():
    if len(sys.argv) > 1 and sys.argv[1] == 'member':
        state_path, url, group, leader_timeout, heartbeat_interval = sys.argv[2:]
        run_member(state_path, url, group, int(leader_timeout), float(heartbeat_interval))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--url', default='redis://127.0.0.1:6379')
    parser.add_argument('--leader-timeout', type=int, default=30)
    parser.add_argument('--heartbeat-interval', type=float, default=5.0)
    parser.add_argument('--period', type=int, default=60,
                        help='[loadbalancer] period the worst case is computed for')
    parser.add_argument('--runs', type=int, default=1)
    args = parser.parse_args()

    crashes, handovers = [], []
    with tempfile.TemporaryDirectory() as state_path:
        for _ in range(args.runs):
            group = 'nova-drs-bench-%s' % uuid.uuid4().hex[:8]
            crashes.append(time_crash_takeover(args, state_path, group))
            handovers.append(time_clean_handover(args, state_path, group))
    worst = max(crashes) + args.period
    verdict = 'OK' if worst <= 2 * args.period else 'EXCEEDED'
    print('backend %s, leader_timeout %d s, heartbeat_interval %.1f s, %d run(s)'
          % (args.url, args.leader_timeout, args.heartbeat_interval, args.runs))
    print('crash (SIGKILL) -> standby leader: median %.2f s, max %.2f s'
          % (statistics.median(crashes), max(crashes)))
    print('clean stop -> standby leader at its next cycle: max %.3f s' % max(handovers))
    print('daemon worst case after a crash (max + one %d s period): %.1f s; '
          'bound (two periods): %d s -> %s'
          % (args.period, worst, 2 * args.period, verdict))


if __name__ == '__main__':
    main()
