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

"""Prometheus metrics of nova-loadbalancer and nova-drs-collector.

Everything the DRS database records is read at scrape time by
``DatabaseCollector`` (so the daemon and the collector report the same and
a restart loses nothing); only what a process alone knows (cycle phase
durations, requests to nova and placement) is counted in memory.
"""

import contextlib
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils
import prometheus_client
from prometheus_client import core
from prometheus_client import utils

from nova_drs.db import api as db_api
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.db import plans as db_plans
from nova_drs.db import state_history
from nova_drs.db import statistics as db_statistics
from nova_drs.observability import energy
from nova_drs.observability import exporter

LOG = logging.getLogger(__name__)

REGISTRY = prometheus_client.CollectorRegistry()

CYCLE_PHASE = prometheus_client.Histogram(
    'nova_drs_cycle_phase_seconds', 'Duration of one phase of a daemon cycle.',
    ['phase'], registry=REGISTRY,
    buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, float('inf')))
REQUESTS = prometheus_client.Counter(
    'nova_drs_api_requests', 'Requests the daemon sent to nova and placement.',
    ['service', 'method'], registry=REGISTRY)

HOST_FAULTS = prometheus_client.Counter(
    'nova_drs_host_faults', 'Hosts a fault of their own left out of a cycle '
    '(no resource provider, nova or placement error on one of their requests, '
    'failed lifecycle step), by kind.', ['kind'], registry=REGISTRY)

SAMPLES_REFUSED = prometheus_client.Counter(
    'nova_drs_samples_refused', 'Statistics samples nova-drs-collector refused, by '
    'reason: wrong_sender (names another host than its publisher), out_of_range, '
    'malformed.', ['reason'], registry=REGISTRY)

HELD = prometheus_client.Gauge(
    'nova_drs_servers_held', 'Servers the oscillation guard held in the last cycle.',
    registry=REGISTRY)
HELD_TOTAL = prometheus_client.Counter(
    'nova_drs_held_migrations', 'Planned migrations the oscillation guard dropped.',
    registry=REGISTRY)

#: Migration reasons as labels: the planner's, and the lifecycle's evacuation
#: of a host being suspended ("evacuate") or entering maintenance
#: ("maintenance"); anything else is counted as "other".
REASONS = {'overload': 'overload', 'underload': 'underload', 'capacity': 'capacity',
           'evacuating host for suspend': 'evacuate',
           'evacuating host for maintenance': 'maintenance'}
WAKE_BUCKETS = (30, 60, 120, 300, 600, 1200, 1800, 3600)
#: Every figure read from a history table covers a bounded window, never the
#: whole table: counts the last hour (what a "per hour" panel shows), wake
#: latencies and energy saved the last day.
COUNT_WINDOW = datetime.timedelta(hours=1)
WAKE_LATENCY_WINDOW = datetime.timedelta(days=1)
ENERGY_WINDOW = datetime.timedelta(days=1)

#: What the daemon saw last: {host: cluster} and {host: power curve}.
_view = {'clusters': {}, 'curves': {}}


@contextlib.contextmanager
def observe_phase(name):
    """Time one phase of a cycle (observe, lifecycle, plan, act)."""
    with CYCLE_PHASE.labels(name).time():
        yield


def count_request(service, method):
    REQUESTS.labels(service, method).inc()


def count_host_faults(kinds):
    for kind in kinds:
        HOST_FAULTS.labels(kind).inc()


def note_held(count):
    HELD.set(count)
    HELD_TOTAL.inc(count)


def note_view(view):
    """Remember cluster membership and power curves of the daemon's last view."""
    _view['clusters'] = {host.name: host.cluster for host in view.snapshot.hosts}
    _view['curves'] = energy.host_curves(view.aggregates)


class DatabaseCollector:
    """Reads the DRS database at scrape time (prometheus custom collector)."""

    def __init__(self, database, conf):
        self.database = database
        self.conf = conf

    def collect(self):
        up = core.GaugeMetricFamily('nova_drs_database_up',
                                    'Whether the last scrape could read the DRS database.')
        try:
            families = list(self._families())
        except Exception as exc:  # a scrape never fails: it says the DB is down
            LOG.warning('metrics: cannot read the DRS database: %s', db_api.reason(exc))
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families

    def _families(self):
        yield from self._hosts()
        yield from self._migrations()
        yield from self._transitions()
        yield from self._stats()
        yield from self._power()
        yield core.GaugeMetricFamily('nova_drs_plans_pending',
                                     'Plans waiting for an administrator\'s approval.',
                                     value=db_plans.count_pending(self.database))

    def _hosts(self):
        rows = drs_hosts.states_and_wake_failed(self.database)
        by_state = core.GaugeMetricFamily('nova_drs_hosts', 'Hosts by DRS state and cluster.',
                                          labels=['state', 'cluster'])
        counts = {}
        for host, state, _ in rows:
            key = (state, _view['clusters'].get(host, ''))
            counts[key] = counts.get(key, 0) + 1
        for key, count in sorted(counts.items()):
            by_state.add_metric(list(key), count)
        yield by_state
        yield core.GaugeMetricFamily('nova_drs_hosts_in_error', 'Hosts in DRS state error.',
                                     value=sum(1 for r in rows if r[1] == 'error'))
        yield core.GaugeMetricFamily('nova_drs_hosts_wake_failed',
                                     'Hosts whose last wake failed.',
                                     value=sum(1 for r in rows if r[2]))

    def _migrations(self):
        since = timeutils.utcnow() - COUNT_WINDOW
        requested = core.GaugeMetricFamily(
            'nova_drs_migrations_requested_last_hour',
            'Migrations the daemon asked nova for in the last hour.', labels=['reason'])
        finished = core.GaugeMetricFamily(
            'nova_drs_migrations_finished_last_hour',
            'Migrations that ended in the last hour, by outcome.',
            labels=['status', 'reason'])
        totals, ends = {}, {}
        for reason, count in lb_migrations.counts_by_reason(self.database, since).items():
            reason = REASONS.get(reason, 'other')
            totals[reason] = totals.get(reason, 0) + count
        for status, reason, count in lb_migrations.finished_by_status_and_reason(
                self.database, since):
            key = (status, REASONS.get(reason, 'other'))
            ends[key] = ends.get(key, 0) + count
        for reason, count in sorted(totals.items()):
            requested.add_metric([reason], count)
        for key, count in sorted(ends.items()):
            finished.add_metric(list(key), count)
        yield requested
        yield finished
        yield core.GaugeMetricFamily('nova_drs_migrations_in_progress',
                                     'Migrations requested and not finished yet.',
                                     value=lb_migrations.count_open(self.database))

    def _transitions(self):
        now = timeutils.utcnow()
        counts = state_history.counts_by_state(self.database, now - COUNT_WINDOW)
        recent = state_history.recent(self.database, now - WAKE_LATENCY_WINDOW,
                                      ('waking', 'active', 'error'))
        transitions = core.GaugeMetricFamily(
            'nova_drs_host_transitions_last_hour', 'Host state transitions of the last '
            'hour by the state entered (suspended = suspends, waking = wakes).',
            labels=['state'])
        for state, count in sorted(counts.items()):
            transitions.add_metric([state], count)
        yield transitions
        latencies, started = [], {}
        for host, state, changed_at in recent:
            if state == 'waking':
                started[host] = changed_at
            elif state == 'active' and host in started:
                latencies.append((changed_at - started.pop(host)).total_seconds())
        buckets = [[utils.floatToGoString(bound), sum(1 for v in latencies if v <= bound)]
                   for bound in WAKE_BUCKETS] + [['+Inf', len(latencies)]]
        yield core.HistogramMetricFamily(
            'nova_drs_wake_latency_seconds',
            'Seconds from waking to active, wakes of the last 24 hours.',
            buckets=buckets, sum_value=sum(latencies))

    def _stats(self):
        max_age = datetime.timedelta(seconds=self.conf.loadbalancer.stats_max_age)
        with self.database.reader() as session:  # one snapshot of both tables
            stored = db_statistics.sample_counts(session)
            newest = db_statistics.newest_per_host(session)
            active = drs_hosts.active_hosts(session)
        samples = core.GaugeMetricFamily('nova_drs_stats_samples',
                                         'Statistics samples stored (within retention).',
                                         labels=['kind'])
        for kind, count in sorted(stored.items()):
            samples.add_metric([kind], count)
        yield samples
        limit = timeutils.utcnow() - max_age
        stale = sum(1 for host in active if newest.get(host) is None or newest[host] < limit)
        yield core.GaugeMetricFamily(
            'nova_drs_stale_hosts', 'Active hosts without a sample newer than '
            '[loadbalancer] stats_max_age: the daemon leaves them alone.', value=stale)

    def _power(self):
        curves = _view['curves']
        hosts = energy.power_now(self.database, self.conf, curves)
        drawn = core.GaugeMetricFamily('nova_drs_power_drawn_watts',
                                       'Watts drawn now (measured or modelled), by cluster.',
                                       labels=['cluster'])
        saved = core.GaugeMetricFamily('nova_drs_power_saved_watts',
                                       'Estimated watts saved now against all hosts on.',
                                       labels=['cluster'])
        measured = core.GaugeMetricFamily(
            'nova_drs_power_measured_hosts', 'Hosts whose watts drawn now come from a '
            'BMC reading rather than the power model, by cluster.', labels=['cluster'])
        per_cluster = {}
        for host, _state, watts, saving, read in hosts:
            cluster = _view['clusters'].get(host, '')
            total = per_cluster.setdefault(cluster, [0.0, 0.0, 0])
            total[0] += watts
            total[1] += saving
            total[2] += int(read)
        for cluster, (watts, saving, read) in sorted(per_cluster.items()):
            drawn.add_metric([cluster], watts)
            saved.add_metric([cluster], saving)
            measured.add_metric([cluster], read)
        yield drawn
        yield saved
        yield measured
        yield core.GaugeMetricFamily(
            'nova_drs_energy_saved_kwh_last_day', 'Estimated kWh saved against all '
            'hosts on, over the last 24 hours.',
            value=energy.saved_kwh(self.database, self.conf,
                                   timeutils.utcnow() - ENERGY_WINDOW, curves))


_collector = []


def start_exporter(conf, database):
    """Serve /metrics when ``[drs_metrics] port`` is set; returns the server or None."""
    if not conf.drs_metrics.port:
        return None
    return serve(conf.drs_metrics.bind_host, conf.drs_metrics.port, database, conf)


def serve(bind_host, port, database, conf):
    """Serve REGISTRY with a collector of ``database`` (replacing an earlier one)."""
    group = conf.drs_metrics
    tls = exporter.tls_context(group)
    auth = exporter.BasicAuth.from_conf(group)
    while _collector:
        REGISTRY.unregister(_collector.pop())
    _collector.append(DatabaseCollector(database, conf))
    REGISTRY.register(_collector[0])
    server = exporter.MetricsServer(REGISTRY, bind_host, port, tls=tls, auth=auth,
                                    client_timeout=group.client_timeout,
                                    max_connections=group.max_connections)
    LOG.info('Prometheus metrics on %s://%s:%d/metrics%s', 'https' if tls else 'http',
             bind_host, server.server_port, ' (basic auth)' if auth else '')
    return server
