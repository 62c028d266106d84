#!/usr/bin/env python3
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

"""``make demo``: the nova-drs sandbox on embedded defaults.

A real nova runs in this process (API, conductor, scheduler, placement and
four fake computes) with nova-drs enabled through configuration only; the
DRS database is SQLite. Sixteen servers replay slices of real PlanetLab CPU
traces; every tick feeds one 5-minute sample into the statistics store and
runs one nova-loadbalancer cycle (observe, decide, act) against the nova
REST API. It consolidates while load is low, suspends emptied hosts, wakes
them when load rises, prints a live table and ends with a summary and the
simulator's report on the same traces (reports/demo/index.html).

Time is virtual: one tick advances oslo's clock (which the daemon and nova
read) by exactly 5 minutes, so every cooldown and window keeps its shipped
default and two runs on any machine print the same table.
"""

import argparse
import collections
import datetime
import io
import logging
import os
import sys
import time
import unittest
import uuid
import warnings

from oslo_utils import timeutils
from oslo_utils.fixture import uuidsentinel

# Sets of strings iterate in an order that depends on the process's hash
# seed; nova and placement list hosts through some. The demo runs with a
# fixed one so nova weighs equal hosts in the same order every run.
if __name__ == '__main__' and os.environ.get('PYTHONHASHSEED') != '0':
    os.environ['PYTHONHASHSEED'] = '0'
    os.execv(sys.executable, [sys.executable] + sys.argv)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
# The demo prints its table, summary and report path. Library chatter
# (nova's monkey-patching notes, alembic, matplotlib DEBUG, executor
# shutdown INFO) is not part of it; errors still show. nova's test fixtures
# raise the root level inside the sandbox test and restore this afterwards.
logging.basicConfig(level=logging.ERROR, format='%(levelname)s %(name)s: %(message)s')


def _quiet():
    """Errors only, on the root logger and on its handlers (nova's logging
    fixture leaves the root at DEBUG, and nova's executors log their
    shutdown after it is gone)."""
    root = logging.getLogger()
    root.setLevel(logging.ERROR)
    for handler in root.handlers:
        handler.setLevel(logging.ERROR)

from nova_drs import conf as drs_conf  # noqa: E402
from nova_drs.cmd import sim  # noqa: E402
from nova_drs.daemon import service  # noqa: E402
from nova_drs.db import hosts as drs_hosts  # noqa: E402
from nova_drs.loadbalancer import catalog  # noqa: E402
from nova_drs.sim import traces as trace_files  # noqa: E402
from nova_drs.stats import ingest  # noqa: E402
from tests.functional import base  # noqa: E402
from tests.functional import daemon_support  # noqa: E402

_quiet()  # nova.test set oslo.log up at INFO on import

DEFAULT_TRACES = os.path.join(REPO, 'data', 'planetlab-sample', '20110303')
ARGS = None


TICK = datetime.timedelta(minutes=5)


def _clock(step, *args):
    """Run one of oslo's time-override functions (``timeutils.set_time_override``
    ...): what every module sees through ``timeutils.utcnow``, including the
    clocks bound as default arguments, which ``mock.patch`` would miss. Their
    deprecation notice is not the demo's output."""
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', category=DeprecationWarning,
                                message='.* is deprecated')
        step(*args)


class Sandbox(base.DrsFunctionalTestCase):
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'   # 10 vCPUs, 8 GiB per host
    COMPUTE_HOSTS = ('compute1', 'compute2', 'compute3', 'compute4')
    VM_VCPUS = 3
    # One tick is one 5-minute sample and one daemon cycle ([loadbalancer]
    # period) on the virtual clock; every other option keeps its default.
    # nova's computes report every 10 s of wall time and the virtual clock
    # jumps 5 minutes a tick, so nova judges a service down only when forced
    # down (a suspended host), never for a late heartbeat. How old statistics
    # are is measured on the DRS database's own clock (SQLite's, the wall
    # clock) from their arrival, so a tick's samples are always fresh.
    # The scheduler's DRS weighers and filters cache what they read for
    # [drs_scheduler] cache_seconds of wall time, which would span a varying
    # number of ticks: here they read afresh for every request. The four
    # fake computes share this machine: the host_load compute plugin would
    # report its CPU and memory (psutil) as theirs, so nova's weighers would
    # follow whatever else the machine runs; without it they weigh the
    # computes by their allocations.
    EXTRA_FLAGS = {('quota', 'instances'): '-1', ('quota', 'cores'): '-1',
                   ('quota', 'ram'): '-1', ('DEFAULT', 'service_down_time'): str(10 ** 8),
                   ('loadbalancer', 'period'): str(int(TICK.total_seconds())),
                   ('drs_scheduler', 'cache_seconds'): '0',
                   ('drs_resources', 'compute_resources'):
                       'instance_stats,compute_units,wake_address'}

    def setUp(self):
        # nova breaks ties between equally weighed hosts in the order of
        # their compute nodes' uuids, random for the fake driver (oslo's
        # uuidsentinel): fixed ones make it break them the same way every run.
        for number, host in enumerate(self.COMPUTE_HOSTS, 1):
            setattr(uuidsentinel, 'node_%s' % host, str(uuid.UUID(int=number)))
        super().setUp()

    def test_sandbox(self):
        self.nova = daemon_support.nova_api_for(self)
        self._one_migration_at_a_time()
        self.power = daemon_support.InProcessHostPower(self)
        names, fractions = trace_files.load_directory(ARGS.traces)
        traces = dict(list(zip(names, fractions, strict=True))[:ARGS.vms])
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'trace', 'vcpus': self.VM_VCPUS, 'ram': 256, 'disk': 1}})
        aggregate = self.admin_api.post_aggregate(
            {'aggregate': {'name': 'sandbox', 'availability_zone': None}})
        for host in self.COMPUTE_HOSTS:
            self.admin_api.add_host_to_aggregate(aggregate['id'], host)
        self.admin_api.post_aggregate_action(aggregate['id'], {'set_metadata': {
            'metadata': {'drs_policy': 'power_saving', 'min_active_hosts': '1'}}})
        servers = {}
        for index, name in enumerate(sorted(traces)):
            host = self.COMPUTE_HOSTS[index % len(self.COMPUTE_HOSTS)]
            server = self._create_server(name='vm%02d' % index, host=host,
                                         networks='none', flavor_id=flavor['id'])
            servers[server['id']] = traces[name]
        balancer = service.LoadBalancer(drs_conf.CONF, self.nova, self.drs_db,
                                        catalog.by_name(ARGS.policy), self.power)
        self._run(balancer, servers)

    def _one_migration_at_a_time(self):
        """Each live migration the daemon asks for finishes before the next
        request. An evacuation leaves the choice of destination to nova's
        scheduler, which weighs hosts on the claims migrations still running
        hold: two at once would be weighed on how far the first had got, a
        matter of the machine's speed."""
        live_migrate = self.nova.live_migrate

        def then_settle(server_id, host=None):
            live_migrate(server_id, host)
            self._settle()

        self.nova.live_migrate = then_settle

    def _feed(self, servers, sample):
        """One statistics sample per host and instance (the collector's job)."""
        now = timeutils.utcnow().isoformat()
        where = {s['id']: s['OS-EXT-SRV-ATTR:host'] for s in self.nova.all_servers()}
        load = collections.defaultdict(float)
        per_host = collections.defaultdict(list)
        for server_id, trace in servers.items():
            percent = 100.0 * trace[sample]
            load[where[server_id]] += percent * self.VM_VCPUS / 10.0
            per_host[where[server_id]].append({
                'instance_uuid': server_id, 'cpu_used_percent': percent,
                'vcpus': self.VM_VCPUS, 'mem': 256})
        batch = [{'host': host, 'sampled_at': now,
                  'host_stats': {'cpu_used_percent': min(100.0, load[host]),
                                 'memory_total': 8192, 'memory_used': 256 * len(per_host[host]),
                                 'vcpus': 10},
                  'instances': per_host[host]}
                 for host in self.COMPUTE_HOSTS]
        ingest.insert_samples(self.drs_db, batch)
        return load

    def _run(self, balancer, servers):
        counts = collections.Counter()
        host_ticks = 0
        print('\n%-5s %-6s %s' % ('tick', 'trace', '  '.join(
            '%-24s' % h for h in self.COMPUTE_HOSTS)))
        # The virtual clock starts where the servers' boot left the wall
        # clock (nova's records are stamped on it) and then only moves by ticks.
        _clock(timeutils.set_time_override, timeutils.utcnow())
        self.addCleanup(_clock, timeutils.clear_time_override)
        for tick in range(ARGS.ticks):
            sample = ARGS.start + tick
            if tick:
                _clock(timeutils.advance_time_delta, TICK)
            load = self._feed(servers, sample)
            summary = balancer.run_cycle()
            for action in summary.get('actions', ()):
                counts[action.kind] += 1
            self._settle()
            for host in list(self.power.waking):
                self.power.come_back(host)      # the woken host finishes booting
            states = drs_hosts.states(self.drs_db)
            on_host = collections.Counter(
                s['OS-EXT-SRV-ATTR:host'] for s in self.nova.all_servers())
            host_ticks += sum(1 for h in self.COMPUTE_HOSTS if states.get(h) != 'suspended')
            cells = ['%-10s %5.1f%% %2d VMs' % (states.get(h, '?'), load[h], on_host[h])
                     for h in self.COMPUTE_HOSTS]
            print('%-5d %02d:%02d  %s' % (tick, sample * 5 // 60, sample * 5 % 60,
                                          '  '.join('%-24s' % c for c in cells)), flush=True)
        lost = [s for s in self.nova.all_servers() if s['status'] not in ('ACTIVE',)]
        total = ARGS.ticks * len(self.COMPUTE_HOSTS)
        print('\nsummary: %d ticks of 5 min, %d servers, %d hosts' % (
            ARGS.ticks, len(servers), len(self.COMPUTE_HOSTS)))
        print('  planned migrations %d, suspends %d, wakes %d' % (
            counts['migrate'], counts['suspend'], counts['wake']))
        print('  host-ticks powered %d of %d (%.0f%% saved vs. all hosts on)' % (
            host_ticks, total, 100.0 * (total - host_ticks) / total))
        print('  servers not ACTIVE at the end: %d' % len(lost))
        self.assertEqual([], lost)

    def _settle(self, timeout=300):
        """Let the migrations a cycle started finish (in wall time): the next
        tick must see them done on any machine, or the table would depend
        on its speed."""
        deadline = time.monotonic() + timeout
        while any(s.get('OS-EXT-STS:task_state') for s in self.nova.all_servers()):
            if time.monotonic() > deadline:
                self.fail('migrations still running after %d s' % timeout)
            time.sleep(0.1)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--traces', default=DEFAULT_TRACES,
                        help='CloudSim-format trace directory (default: bundled sample)')
    parser.add_argument('--vms', type=int, default=16)
    parser.add_argument('--start', type=int, default=30, help='first trace sample')
    parser.add_argument('--ticks', type=int, default=36, help='cycles to run')
    parser.add_argument('--policy', default='drs', help='decision policy (drs, lr_mmt_1.2...)')
    ARGS = parser.parse_args()
    runner_output = io.StringIO()  # "Ran 1 test ... OK" is for failures only
    result = unittest.TextTestRunner(verbosity=0, stream=runner_output).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(Sandbox))
    _quiet()
    if not result.wasSuccessful():
        sys.stderr.write(runner_output.getvalue())
        return 1
    report = os.path.join(REPO, 'reports', 'demo')
    print('\nThe same traces, a whole day, in the simulator (CloudSim data-centre model, '
          '8 hosts):', flush=True)
    return sim.main([ARGS.traces, '--hosts', '8', '--policy', ARGS.policy,
                     '--policy', 'lr_mmt_1.2', '--policy', 'dvfs', '--no-progress',
                     '--report', report])


if __name__ == '__main__':
    sys.exit(main())
