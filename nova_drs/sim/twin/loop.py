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

"""The closed loop: the shipped ``LoadBalancer`` cycle against the twin, in virtual time.

Per run: a scratch DRS database (SQLite, the schema of ``migration.sync``),
the same hosts, VM types and initial placement as the core-only simulator
(``engine.Simulation``), and a clock (``timeutils.set_time_override``)
the loop advances. Every ``[loadbalancer] period`` the daemon runs one
``run_cycle`` exactly as nova-loadbalancer's launcher does (an exception
costs that cycle only); every 300 s the trace sample reaches the statistics
store through ``stats.ingest.insert_samples``, the collector's code. Between
cycles the twin runs its events (migration phases, hosts going down and
coming up) and meters energy, SLA and migrations with the simulator's
definitions (``metering.TwinAccumulator``). After every cycle the invariants are
checked (``invariants.check``).

With a fault seed two daemons share the database and the cloud, each with
its own connection and caches, and one leader lock (``twin.election``): a
``leader_takeover`` fault hands the lock to the standby mid-plan.
"""

import collections
import datetime
import os
import random
import tempfile
import time

from oslo_config import cfg
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs import loadbalancer_plugins
from nova_drs.clients import nova_api
from nova_drs.daemon import service
from nova_drs.db import api as db_api
from nova_drs.db import migration as db_migration
from nova_drs.sim import datacenter
from nova_drs.sim import engine
from nova_drs.sim import metrics
from nova_drs.sim import oscillation
from nova_drs.sim.twin import cloud as twin_cloud
from nova_drs.sim.twin import election as twin_election
from nova_drs.sim.twin import faults as twin_faults
from nova_drs.sim.twin import invariants as twin_invariants
from nova_drs.sim.twin import metering as twin_metering
from nova_drs.sim.twin import power as twin_power
from nova_drs.sim.twin import transport as twin_transport
from nova_drs.stats import ingest

#: Midnight of the trace day (the PlanetLab days are named YYYYMMDD).
DEFAULT_START = datetime.datetime(2011, 3, 3)
#: Half of a 1 Gbit/s link, as the simulator's RAM / (bandwidth / 2).
BANDWIDTH_MB_S = 1000.0 / 8 / 2
#: Pages a guest at 100 % CPU dirties per second (MB/s); it scales with the
#: VM's utilisation. At 40 MB/s a 1740 MB VM at full load takes 77 s, idle 28 s.
DIRTY_MB_S_AT_FULL = 40.0


class ClosedLoop:
    def __init__(self, names, traces, hosts=40, host_model='cloudsim', seed=0,
                 faults_seed=None, samples=None, stats_delay=None, stats_skew=None,
                 overrides=None, database_url=None, retire_idle=True,
                 ping_pong_window=oscillation.DEFAULT_WINDOW, warm_up_hours=0):
        self.names = names
        # Hours the daemon runs on the day's first sample before the metered
        # day: a cloud where nova-loadbalancer ran the day before, not one it
        # meets for the first time at midnight (doc/source/twin.md).
        self.warm_up = datetime.timedelta(hours=warm_up_hours)
        self.traces = traces
        self.samples = samples or len(traces[0])
        self.core = engine.Simulation(names, traces, 'drs', hosts=hosts,
                                      host_model=host_model, seed=seed,
                                      retire_idle=retire_idle,
                                      ping_pong_window=ping_pong_window)
        self.ping_pong_window = ping_pong_window
        self.rng = random.Random(seed)
        self.faults = twin_faults.Faults(faults_seed)
        # Late and skewed statistics are part of the fault mix unless given.
        if stats_delay is None:
            stats_delay = twin_faults.STATS_DELAY if self.faults.enabled else 0
        if stats_skew is None:
            stats_skew = twin_faults.STATS_SKEW if self.faults.enabled else 0
        self.stats_delay = datetime.timedelta(seconds=stats_delay)
        self.skew = {name: datetime.timedelta(seconds=self.rng.uniform(-stats_skew, stats_skew))
                     for name in self.core.host_names}
        self.faults.count('clock_skewed_hosts', sum(1 for s in self.skew.values() if s))
        self.overrides = dict(overrides or {})
        self.database_url = database_url
        self.violations = collections.Counter()
        self.cycle_errors = 0
        self.retired = set()

    # -- set-up ----------------------------------------------------------------
    def _conf(self):
        conf = cfg.ConfigOpts()
        drs_conf.register_opts(conf)
        conf([], project='nova', default_config_files=[])
        for (group, name), value in self.overrides.items():
            conf.set_override(name, value, group)
        return conf

    def _demand(self, v):
        return self.traces[v][self._sample_index()] * self.core.vm_types[v][0]

    def _sample_index(self):
        """The trace sample now: the first one during the warm-up."""
        k = int((timeutils.utcnow() - self.day).total_seconds() // datacenter.INTERVAL)
        return min(max(k, 0), self.samples - 1)

    def _clock_seconds(self):
        return (timeutils.utcnow() - self.start).total_seconds()

    # -- the run -----------------------------------------------------------------
    def run(self, progress=None):
        self.day = DEFAULT_START
        self.start = self.day - self.warm_up
        timeutils.set_time_override(self.start)
        scratch = None
        try:
            url = self.database_url
            if url is None:
                # In memory when the machine has a tmpfs: a commit is not an fsync.
                shm = '/dev/shm' if os.path.isdir('/dev/shm') else None
                scratch = tempfile.mkdtemp(prefix='nova-drs-twin-', dir=shm)
                url = 'sqlite:///' + os.path.join(scratch, 'drs.sqlite')
            database = db_api.Database(url)
            if database.engine.dialect.name == 'sqlite':
                sa.event.listen(database.engine, 'connect', twin_metering.virtual_sqlite_clock)
                database.engine.dispose()
            db_migration.sync(database)
            try:
                with twin_transport.virtual_retry_delays():
                    return self._run(database, progress)
            finally:
                database.dispose()
        finally:
            timeutils.clear_time_override()
            if scratch:
                for name in os.listdir(scratch):
                    os.unlink(os.path.join(scratch, name))
                os.rmdir(scratch)

    def _run(self, database, progress):
        core = self.core
        placement = core.initial_placement()
        self.cloud = cloud = twin_cloud.Cloud(
            self.names, core.vm_types, core.models, core.host_names, placement,
            self._demand, self.rng, BANDWIDTH_MB_S, DIRTY_MB_S_AT_FULL, self.faults)
        self.power = twin_power.TwinPower(cloud, self.rng)
        self._start_metering()
        cloud.observers.append(self._migration_done)
        self.conf = conf = self._conf()
        # The scheduler's MigrationLimitFilter reads the same option (nova.conf).
        cloud.max_arrivals = conf.loadbalancer.max_migrations_per_destination
        self.balancers = self._daemons(conf, database)
        self.costs = []
        self._statements = 0
        sa.event.listen(database.engine, 'before_cursor_execute', self._count_statement)
        # The core-only simulator counts an empty host as off: both start alike.
        self.power.start_asleep(database, core.host_names,
                                {core.host_names[i] for i in placement}, self.start)
        self.metered_at = self.start
        period = datetime.timedelta(seconds=conf.loadbalancer.period)
        interval = datetime.timedelta(seconds=datacenter.INTERVAL)
        end = self.day + self.samples * interval
        next_sample, next_cycle = self.start, self.start
        cycles = 0
        while True:
            now = min(next_sample, next_cycle)
            if now >= end:
                break
            self._advance(now)
            if now == self.day and self.warm_up:
                self._start_metering()
            if now == next_sample:
                self._sample(database, now)
                next_sample += interval
            if now == next_cycle:
                requests, statements = cloud.requests, self._statements
                self.decision_seconds = 0.0
                started = time.perf_counter()
                for balancer in self.balancers:
                    try:
                        balancer.run_cycle()
                    except Exception:
                        # nova-loadbalancer's launcher logs it and runs the next cycle.
                        self.cycle_errors += 1
                self.costs.append((time.perf_counter() - started, cloud.requests - requests,
                                   self._statements - statements, self.decision_seconds))
                cycles += 1
                twin_invariants.check(self, database)
                next_cycle += period
                if progress is not None and now >= self.day:
                    progress(min((now - self.day) // interval + 1, self.samples),
                             self.samples)
        self._advance(end)
        loads, _demand = self._loads()
        self.acc.sample(loads, self._powered())   # as many points as the core's series
        return self._summary(cycles)

    def _start_metering(self):
        """Fresh meters: at the start, and again when a warm-up ends (what it
        drew, moved and slept is not the day's; invariant violations and
        failed cycles still count)."""
        core = self.core
        self.acc = twin_metering.TwinAccumulator(len(core.models), len(self.names),
                                                 [m.curve for m in core.models], core.capacity)
        self.ping_pong = oscillation.PingPongCounter(self.ping_pong_window)
        self.power.shutdowns = 0
        self.power.sleeps = []
        self.failed_migrations = 0

    def _daemons(self, conf, database):
        """One daemon; with faults, a leader and a standby (their own
        connections and caches, one lock) so a takeover can happen."""
        def daemon(coordinator=None):
            nova = nova_api.NovaAPI(
                twin_transport.connect(self.cloud, timeout=conf.drs_auth.timeout),
                retries=nova_api.retry_options(conf.drs_auth))
            balancer = service.LoadBalancer(conf, nova, database,
                                            loadbalancer_plugins.by_name('drs'),
                                            self.power, coordinator=coordinator)
            balancer.planner.plan = self._timed_decision(balancer.planner.plan)
            return balancer
        if not self.faults.enabled:
            return [daemon()]
        members = ('twin-daemon-a', 'twin-daemon-b')
        self.election = twin_election.Election(members)
        return [daemon(twin_election.TwinCoordinator(self.election, member, self.faults))
                for member in members]

    def _count_statement(self, *_args):
        self._statements += 1

    def _timed_decision(self, plan):
        """The core's decision (the planner on the cycle's view), timed: what
        the rest of the cycle costs is measured against it."""
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return plan(*args, **kwargs)
            finally:
                self.decision_seconds += time.perf_counter() - started
        return timed

    def _advance(self, until):
        """Run the twin's events up to ``until``, metering every constant stretch."""
        while True:
            now = timeutils.utcnow()
            if now > self.metered_at:
                # The clock moved inside a cycle: calls that hung, BMCs that timed out.
                self._meter((now - self.metered_at).total_seconds())
            upcoming = self.cloud.next_event(until)
            stop = until if upcoming is None else max(upcoming, now)
            if stop > now:
                self._meter((stop - now).total_seconds())
                timeutils.set_time_override(stop)
            self.metered_at = max(stop, now)
            self.cloud.run_due()
            if upcoming is None:
                return

    def _loads(self):
        """(allocated, requested) MIPS per host now, the simulator's rules:
        a VM gets at most one core, a migrating VM runs on its source and its
        destination reserves 10 % of its demand."""
        core, cloud = self.core, self.cloud
        index = {name: i for i, name in enumerate(core.host_names)}
        allocated = [0.0] * len(core.models)
        requested = [0.0] * len(core.models)
        demand = {}
        for uuid, server in cloud.servers.items():
            v = cloud.vm_of[uuid]
            d = demand[v] = self._demand(v)
            i = index[server['OS-EXT-SRV-ATTR:host']]
            requested[i] += d
            allocated[i] += min(d, core.models[i].pe_mips)
            migration = server.get('_migration')
            if migration is not None and migration['status'] == 'running':
                j = index[migration['dest_compute']]
                requested[j] += d
                allocated[j] += 0.1 * d
        loads = [(min(a, c), r) for a, r, c in zip(allocated, requested, core.capacity,
                                                    strict=True)]
        return loads, demand

    def _powered(self):
        return [self.cloud.hosts[name].powered for name in self.core.host_names]

    def _meter(self, seconds):
        loads, demand = self._loads()
        self.acc.segment(loads, self._powered(), seconds)
        for v, d in demand.items():
            self.acc.requested(v, d * seconds)

    def _migration_done(self, kind, server, source, destination, status, seconds):
        v = self.cloud.vm_of[server]
        lost = self._demand(v) * 0.1 * seconds
        if status == 'completed':
            self.acc.migration(v, lost)
            self.ping_pong.moved(v, source, destination, self._clock_seconds())
        else:
            self.failed_migrations += status == 'error'
            self.acc.lost[v] += lost

    def _sample(self, database, now):
        """The collector's round: retire idle VMs (as the simulator), then one
        sample per host and server through the collector's ingest code."""
        day_k = int((now - self.day).total_seconds() // datacenter.INTERVAL)
        k = max(day_k, 0)
        following = min(k + 1, self.samples - 1)
        cloud = self.cloud
        if day_k >= 1 and self.core.retire_idle:
            for uuid in list(cloud.servers):
                trace = self.traces[cloud.vm_of[uuid]]
                if trace[k] == 0 and trace[following] == 0:
                    cloud.delete(uuid)
                    self.retired.add(uuid)
        loads, _demand = self._loads()
        if day_k >= 1:
            self.acc.sample(loads, self._powered())
        by_host = collections.defaultdict(list)
        for uuid, server in cloud.servers.items():
            v = cloud.vm_of[uuid]
            by_host[server['OS-EXT-SRV-ATTR:host']].append({
                'instance_uuid': uuid, 'vcpus': server['flavor']['vcpus'],
                'mem': server['flavor']['ram'],
                'cpu_used_percent': 100.0 * self.traces[v][k]})
        batch = []
        for i, name in enumerate(self.core.host_names):
            host = cloud.hosts[name]
            if not host.up:
                continue                  # a sleeping host's collector is asleep too
            batch.append({
                'host': name, 'sampled_at': (now + self.skew[name]).isoformat(),
                # A monitor never reports above 100 % (ingest refuses it); the
                # demand beyond the host's capacity shows as the servers' own.
                'host_stats': {'cpu_used_percent': min(100.0, 100.0 * loads[i][0]
                                                       / host.capacity),
                               'vcpus': int(host.capacity),
                               'memory_total': host.model.ram_mb, 'memory_used': 0},
                'instances': by_host.get(name, [])})
        if self.stats_delay:
            self.faults.count('stats_delayed')
            cloud.at(now + self.stats_delay, lambda: self._ingest(database, batch))
        else:
            self._ingest(database, batch)

    def _ingest(self, database, batch):
        """The collector's ingest; a sample it refuses is the twin's defect
        (a real monitor would not send it), so it counts as a violation."""
        _hosts, _instances, errors = ingest.insert_samples(database, batch)
        if errors:
            self.violations['samples_refused'] += len(errors)

    # -- result ------------------------------------------------------------------
    def _summary(self, cycles):
        result = self.acc.summary()
        result.update(
            ping_pong=self.ping_pong.count, host_shutdowns=self.power.shutdowns,
            sleeps_under_an_hour=sum(1 for _h, s in self.power.sleeps if s < metrics.SHORT_SLEEP),
            failed_migrations=self.failed_migrations, cycles=cycles,
            idle_on_kwh=self.acc.idle_on_ws / 3.6e6,
            overloaded_host_minutes=self.acc.violation_time / 60.0,
            cycle_errors=self.cycle_errors, retired_vms=len(self.retired),
            invariant_violations=sum(self.violations.values()),
            violations=dict(self.violations), faults=self.faults.as_dict(),
            requests=self.cloud.requests, cycle_cost=twin_metering.cycle_cost(self.costs),
            warm_up_hours=self.warm_up.total_seconds() / 3600)
        return result


def subset(names, traces, hosts, reference_hosts=datacenter.DEFAULT_HOSTS):
    """Every (len(names) / (len(names) * hosts / 800))-th trace: the VMs per host
    of CloudSim's 800-host centre on ``hosts`` hosts (all of them at 800 or more)."""
    count = max(1, min(len(names), len(names) * hosts // reference_hosts))
    step = len(names) / count
    picked = [int(i * step) for i in range(count)]
    return [names[i] for i in picked], [traces[i] for i in picked]
