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

"""Energy and power figures from the DRS database and the power model.

Hosts' states come from ``drs_hosts`` and their transition history, their
utilisation from the statistics store; watts from the BMC readings the
daemon stored (``drs_power_readings``) where there are some, else from the
curves of ``[drs_energy]`` and the aggregates' ``drs_power_curve`` metadata.
"""

import datetime
import re

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs import aggregate_keys
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.db import power_readings
from nova_drs.db import state_history
from nova_drs.db import statistics as db_statistics
from nova_drs.observability import power_model

LOG = logging.getLogger(__name__)
_RELATIVE = re.compile(r'^(\d{1,6})([dhm])$')
_UNITS = {'d': 'days', 'h': 'hours', 'm': 'minutes'}


def parse_since(text, now):
    """A UTC time from "7d"/"12h"/"30m" or ISO 8601; ValueError when neither.

    RFC 3339 lets ``T`` and ``Z`` be lower case; a time that leaves
    datetime's range once moved to UTC is before year 1 (the report then
    starts with the oldest record) or after year 9999 (not in the past). A
    duration reaching back before year 1 (``999999d``) starts there too.
    """
    match = _RELATIVE.match(text.strip())
    if match:
        try:
            return now - datetime.timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
        except OverflowError:
            return datetime.datetime.min
    try:
        parsed = datetime.datetime.fromisoformat(text.strip().upper())
    except ValueError:
        raise ValueError('since=%r is neither a duration (7d, 12h, 30m) nor an ISO 8601 '
                         'time' % text) from None
    try:
        when = timeutils.normalize_time(parsed)
    except OverflowError:
        if parsed.year > 1:
            raise ValueError('since=%r is not in the past' % text) from None
        when = datetime.datetime.min
    if when >= now:
        raise ValueError('since=%r is not in the past' % text)
    return when


def host_curves(aggregates):
    """{host: curve} for hosts whose aggregate sets a valid ``drs_power_curve``.

    ``aggregates``: dicts with name, hosts and metadata (nova's view). An
    invalid value is logged and the default curve is used.
    """
    curves = {}
    for aggregate in sorted(aggregates, key=lambda a: a['name']):
        curve = aggregate_keys.READER.value(aggregate['name'], aggregate.get('metadata'),
                                            aggregate_keys.POWER_CURVE_KEY)
        if curve is None:
            continue
        for host in aggregate.get('hosts') or ():
            curves.setdefault(host, curve)
    return curves


def _curve(conf, curves, host):
    return curves.get(host) or tuple(conf.drs_energy.power_curve)


def power_now(database, conf, curves=None):
    """[(host, state, watts drawn, watts saved, measured)] for every known host.

    An active host's BMC reading counts when it is no older than
    ``[loadbalancer] stats_max_age`` (like the statistics the daemon trusts);
    otherwise the power model prices the host's newest CPU sample.
    """
    curves = curves or {}
    states = drs_hosts.states(database)
    samples = db_statistics.latest_hosts(database, list(states))
    fresh = timeutils.utcnow() - datetime.timedelta(seconds=conf.loadbalancer.stats_max_age)
    readings = {host: watts for host, (read_at, watts)
                in power_readings.newest(database).items() if read_at >= fresh}
    result = []
    for host, state in sorted(states.items()):
        newest = samples.get(host) or [{}]
        utilisation = (newest[0].get('cpu_used_percent') or 0.0) / 100.0
        measured = readings.get(host) if state == drs_hosts.ACTIVE else None
        drawn, saved = power_model.power_now(state, _curve(conf, curves, host), utilisation,
                                             conf.drs_energy.suspended_watts, measured)
        result.append((host, state, drawn, saved, measured is not None))
    return result


def _mean_utilisation(database, hosts, since, until):
    means = {host: (value or 0.0) / 100.0 for host, value in
             db_statistics.mean_cpu_by_host(database, since, until).items()}
    return {host: means.get(host, 0.0) for host in hosts}


def _account(database, conf, since, until, hosts, curves):
    """(totals HostEnergy, measured Wh, {host: HostEnergy}) of ``hosts``."""
    current = drs_hosts.states(database)
    hosts = sorted(current if hosts is None else set(hosts) & set(current))
    created = drs_hosts.created_at(database)
    before = state_history.state_before(database, since, hosts)
    changes = {}
    for change in state_history.changes(database, since, until, hosts):
        changes.setdefault(change['host'], []).append((change['changed_at'],
                                                       change['state']))
    utilisation = _mean_utilisation(database, hosts, since, until)
    measured = power_readings.mean_watts(database, since, until, hosts)
    totals, measured_wh, per_host = power_model.HostEnergy(), 0.0, {}
    for host in hosts:
        host_changes = changes.get(host, [])
        # Without earlier history the host was in the state it first left, or
        # in its current state when it never moved.
        initial = before.get(host) or (
            _first_left(host_changes) if host_changes else current[host])
        spans = power_model.intervals(initial, host_changes,
                                      _first_record(since, before.get(host), created.get(host),
                                                    host_changes), until)
        energy = power_model.host_energy(spans, _curve(conf, curves, host),
                                         utilisation[host], conf.drs_energy.suspended_watts,
                                         measured.get(host))
        totals.drawn_wh += energy.drawn_wh
        totals.saved_wh += energy.saved_wh
        totals.suspended_hours += energy.suspended_hours
        measured_wh += energy.drawn_wh if energy.measured else 0.0
        per_host[host] = energy
    return totals, measured_wh, per_host


def report(database, conf, since, until=None, hosts=None, curves=None):
    """Energy of ``hosts`` (default: every known host) between since and until.

    kWh drawn, kWh saved against all hosts on, suspended host-hours,
    migrations requested by the daemon, and which share was measured.
    """
    until = until or timeutils.utcnow()
    totals, measured_wh, per_host = _account(database, conf, since, until, hosts,
                                             curves or {})
    migrations = (lb_migrations.counts_by_status(database, list(per_host), since, until)
                  if per_host else {})
    return {
        'since': since.isoformat(), 'until': until.isoformat(), 'hosts': len(per_host),
        'kwh_drawn': round(totals.drawn_wh / 1000, 4),
        'kwh_saved': round(totals.saved_wh / 1000, 4),
        'suspended_host_hours': round(totals.suspended_hours, 3),
        'migrations': sum(migrations.values()),
        'migrations_by_status': migrations,
        'measured_share': round(measured_wh / totals.drawn_wh, 4) if totals.drawn_wh else 0.0,
        'measured_hosts': sum(1 for energy in per_host.values() if energy.measured),
        'per_host': [{'host': host, 'kwh_drawn': round(energy.drawn_wh / 1000, 4),
                      'kwh_saved': round(energy.saved_wh / 1000, 4),
                      'suspended_hours': round(energy.suspended_hours, 3),
                      'source': 'measured' if energy.measured else 'modelled'}
                     for host, energy in per_host.items()],
    }


def _first_record(since, state_before_since, created_at, host_changes):
    """When the host's accounting starts: ``since``, or its first record when later.

    A host nova-drs first saw an hour ago draws nothing for the 23 hours
    before it in a 24-hour report. Its first record is the earlier of its
    ``drs_hosts`` row and its first state change (the row may be younger when
    it was re-created); history before ``since`` means it existed all along.
    """
    if state_before_since is not None:
        return since
    candidates = [when for when in (created_at, host_changes[0][0] if host_changes else None)
                  if when is not None]
    return max(since, min(candidates)) if candidates else since


def _first_left(host_changes):
    """The state a host was in before its first recorded transition."""
    first = host_changes[0][1]
    return {'suspending': 'active', 'suspended': 'suspending', 'waking': 'suspended',
            'active': 'suspending', 'error': 'waking',
            'entering_maintenance': 'active', 'maintenance': 'entering_maintenance'}.get(
                first, 'active')


def saved_kwh(database, conf, since, curves=None):
    """kWh saved from ``since`` to now (the metrics read a bounded window)."""
    totals, _, _ = _account(database, conf, since, timeutils.utcnow(), None, curves or {})
    return totals.saved_wh / 1000
