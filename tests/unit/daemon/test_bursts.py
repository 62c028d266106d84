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

"""A plan of 2,000 migrations (plus suspends and wakes) leaves in bounded bursts.

Real orchestrator, real cycle accounting (``LoadBalancer._act``), a real
SQLite DRS database; only nova is a stand-in (tests/unit/daemon/fakes.py)
that records what it is asked and finishes each migration one cycle after it
started.
"""

import collections
import os
import tempfile

from nova_drs import conf as drs_conf
from nova_drs.daemon import budget as budget_mod
from nova_drs.daemon import cloud_view
from nova_drs.daemon import service
from nova_drs.db import api as db_api
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import migration
from nova_drs.db import plans
from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from tests.unit.daemon import fakes

LIMITS = {'per_host': 2, 'per_destination': 2, 'per_cluster': 50,
          'suspends_per_cycle': 2, 'wakes_per_cycle': 3}
SOURCES = ['src%03d' % i for i in range(100)]
DESTINATIONS = ['dst%03d' % i for i in range(100)]
IDLE = ['idle%02d' % i for i in range(12)]
ASLEEP = ['asleep%02d' % i for i in range(12)]


def cluster_of(host):
    return 'c%d' % (int(host[-1]) % 2)


class TestBoundedBursts:

    def setup_method(self):
        directory = tempfile.mkdtemp(prefix='nova-drs-bursts-')
        self.db = db_api.Database('sqlite:///' + os.path.join(directory, 'drs.sqlite'))
        migration.sync(self.db)
        drs_hosts.ensure_many(self.db, SOURCES + DESTINATIONS + IDLE + ASLEEP)
        for host in ASLEEP:
            drs_hosts.transition(self.db, host, drs_hosts.ACTIVE, drs_hosts.SUSPENDING, 't')
            drs_hosts.transition(self.db, host, drs_hosts.SUSPENDING, drs_hosts.SUSPENDED,
                                 't')
        servers = {}
        self.destination = {}
        for i in range(2000):
            uuid = 'server-%04d' % i
            source = SOURCES[i // 20]
            # Destinations in the source's cluster, spread evenly.
            self.destination[uuid] = DESTINATIONS[(i % 50) * 2 + int(source[-1]) % 2]
            servers[uuid] = {'id': uuid, 'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': source,
                             'OS-EXT-STS:task_state': None}
        self.nova = fakes.FakeNova(servers)
        self.balancer = service.LoadBalancer(drs_conf.CONF, self.nova, self.db,
                                             catalog.by_name('drs'), power_drivers=None)
        self.balancer.orchestrator.limits = LIMITS
        self.plan = ([plans.Action(model.Migrate(uuid, source, self.destination[uuid], 'test'))
                      for uuid, source in ((u, s['OS-EXT-SRV-ATTR:host'])
                                           for u, s in sorted(servers.items()))]
                     + [plans.Action(model.Suspend(h, 'test')) for h in IDLE]
                     + [plans.Action(model.Wake(h, 'test')) for h in ASLEEP])

    def teardown_method(self):
        self.db.dispose()

    def _view(self):
        hosts = tuple(model.Host(name=h, vcpus=64, ram_mb=262144, mips=64.0,
                                 cluster=cluster_of(h))
                      for h in SOURCES + DESTINATIONS + IDLE + ASLEEP)
        return cloud_view.View(
            snapshot=model.Snapshot(hosts=hosts, instances=(), migrations=(), now=0.0),
            services={}, servers=self.nova.servers, clusters={}, stale_hosts=(),
            aggregates=[], hypervisors=[], in_flight=self.nova.in_flight())

    def _check_cycle(self, view, requests, states_before, states_after):
        in_flight = list(view.in_flight) + [
            (self.nova.servers[uuid]['OS-EXT-SRV-ATTR:host'], dest) for uuid, dest in requests]
        for position, limit in ((0, LIMITS['per_host']), (1, LIMITS['per_destination'])):
            counts = collections.Counter(move[position] for move in in_flight)
            assert max(counts.values(), default=0) <= limit
        per_cluster = collections.Counter(cluster_of(source) for source, _ in in_flight)
        assert max(per_cluster.values(), default=0) <= LIMITS['per_cluster']
        for kind, before, after, limit in (
                ('suspend', 'active', 'suspending', LIMITS['suspends_per_cycle']),
                ('wake', 'suspended', 'waking', LIMITS['wakes_per_cycle'])):
            moved = collections.Counter(
                cluster_of(h) for h in states_after
                if states_before[h] == before and states_after[h] == after)
            assert max(moved.values(), default=0) <= limit, kind

    def test_two_thousand_migrations_leave_within_the_limits_and_all_arrive(self):
        plan_id = plans.save(self.db, 'manual', self.plan, 'approved')
        cycles = 0
        while plans.approved(self.db):
            cycles += 1
            assert cycles <= 500, 'the plan never completes'
            view = self._view()
            were_running = list(self.nova.running)
            budget = budget_mod.budget_for(view, LIMITS)
            states_before = drs_hosts.states(self.db)
            already = len(self.nova.requests)
            summary = self.balancer._act([], view, budget)
            requests = self.nova.requests[already:]
            self._check_cycle(view, requests, states_before, drs_hosts.states(self.db))
            if cycles == 1:
                # The first burst: 2 per source/destination, 50 per cluster.
                assert len(requests) == 2 * LIMITS['per_cluster'], summary
                assert summary['deferred'] > 1800
            self.nova.finish(were_running)     # what started this cycle runs on
            if not plans.approved(self.db):
                self.nova.finish(list(self.nova.running))
        # Nothing lost, nothing twice: every server moved once, to its destination
        # (nova records every request, a second one for a moving server too).
        assert not self.nova.called('cold_migrate')
        assert len(self.nova.migration_records) == len(self.nova.requests)  # none refused
        assert sorted(uuid for uuid, _ in self.nova.requests) == sorted(self.destination)
        assert {uuid: s['OS-EXT-SRV-ATTR:host'] for uuid, s in
                self.nova.servers.items()} == self.destination
        states = drs_hosts.states(self.db)
        assert {states[h] for h in IDLE} == {'suspending'}
        assert {states[h] for h in ASLEEP} == {'waking'}
        assert plans.set_status(self.db, plan_id, 'done', 'done') is True
        # 2,000 moves, 100 at a time, each running through the next cycle.
        assert cycles >= 2 * 2000 // (2 * LIMITS['per_cluster']) - 1

    def test_evacuations_count_against_the_same_limits(self):
        view = self._view()
        budget = budget_mod.budget_for(view, LIMITS)
        admitted = [host for host in SOURCES[:30] for _ in range(5)
                    if budget.admit_evacuation(host)]
        # 15 hosts of each cluster ask 5 times: 2 per host, 25 per cluster.
        assert collections.Counter(admitted) == {h: 2 for h in SOURCES[:30]}
        plans.save(self.db, 'manual', self.plan, 'approved')
        self.balancer._act([], view, budget)
        sources = collections.Counter(self.nova.servers[uuid]['OS-EXT-SRV-ATTR:host']
                                      for uuid, _ in self.nova.requests)
        assert not set(sources) & set(SOURCES[:30])     # their hosts are at the limit
        # The clusters' remaining 25 each go to other sources.
        assert sum(sources.values()) == 2 * (LIMITS['per_cluster'] - 30)
