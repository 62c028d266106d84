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

"""A daemon cycle's inventory as plain data, and the snapshot rebuilt from it.

The daemon stores what it planned from minus the CPU histories (those are
the statistics tables); the replay puts the histories back from the stored
samples the way the daemon's ``stats_history.History`` held them: the newest
``history_length`` samples taken after ``history_since`` and up to the
newest sample the cycle had read. Same inventory + same samples -> same
snapshot -> same plan. Pure: no I/O.

It is the format of the ``body`` that nova_drs.db.inventory stores, shared
by its writer (the daemon) and its reader (the simulator's ``--from-stats``
replay), so it lives beside the table rather than in either: the daemon
must not import the simulator.
"""

import calendar
import dataclasses

from nova_drs import membership
from nova_drs.loadbalancer import model

FORMAT = 'nova-drs-cycle/1'
_NO_HISTORY = ('cpu_history',)


def _fields(obj):
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)
            if f.name not in _NO_HISTORY}


def epoch(when):
    """Seconds since the epoch of a naive UTC datetime (None stays None)."""
    if when is None:
        return None
    return calendar.timegm(when.timetuple()) + when.microsecond / 1e6


def recorded(action):
    """A plan action (db.plans.Action) as the inventory keeps it: no automation."""
    return {k: v for k, v in action.to_json().items() if k != 'automation'}


def body(view, actions, now, history_since, history_newest, history_length):
    """The JSON-able inventory of one cycle (``actions``: db.plans.Action);
    times are epoch seconds."""
    snapshot = view.snapshot
    return {
        'format': FORMAT, 'now': snapshot.now, 'taken_at': now,
        'history_since': history_since, 'history_newest': history_newest,
        'history_length': history_length,
        'hosts': [_fields(h) for h in snapshot.hosts],
        'instances': [_fields(i) for i in snapshot.instances],
        'migrations': [_fields(m) for m in snapshot.migrations],
        'aggregates': [{'name': a['name'], 'hosts': list(a.get('hosts') or ()),
                        'metadata': dict(a.get('metadata') or {})}
                       for a in view.aggregates],
        'actions': [recorded(a) for a in actions],
        'opt_out': dict(getattr(view, 'opt_out', None) or {}),
    }


def history(samples, since, newest, length):
    """CPU fractions, oldest first: the ``length`` newest of ``samples``
    ((epoch seconds, percent), oldest first) in (since, newest]."""
    if newest is None:
        return ()
    kept = [min(1.0, (cpu or 0.0) / 100.0) for when, cpu in samples
            if (since is None or when > since) and when <= newest]
    return tuple(kept[-length:])


@dataclasses.dataclass
class CycleView:
    """What the cluster planner reads from a daemon View."""

    snapshot: model.Snapshot
    aggregates: list
    clusters: dict
    #: host -> [(aggregate name, metadata)] (nova_drs.membership of ``aggregates``)
    membership: dict
    #: server uuid -> drs:automation level (disabled, manual) of opted-out servers
    opt_out: dict = dataclasses.field(default_factory=dict)


def rebuild(cycle, host_samples, instance_samples):
    """The cycle's CycleView with histories from ``{key: [(t, percent), ...]}``."""
    args = cycle['history_since'], cycle['history_newest'], cycle['history_length']

    def hist(samples, key):
        return history(samples.get(key, ()), *args)

    hosts = tuple(model.Host(**dict(h, power_curve=_tuple(h.get('power_curve'))),
                             cpu_history=hist(host_samples, h['name']))
                  for h in cycle['hosts'])
    instances = tuple(model.Instance(**i, cpu_history=hist(instance_samples, i['uuid']))
                      for i in cycle['instances'])
    migrations = tuple(model.InFlightMigration(**m) for m in cycle['migrations'])
    snapshot = model.Snapshot(hosts=hosts, instances=instances, migrations=migrations,
                              now=cycle['now'])
    aggregates = cycle['aggregates']
    return CycleView(snapshot=snapshot, aggregates=aggregates,
                     clusters={a['name']: a['metadata'] for a in aggregates},
                     membership=membership.of_listed(aggregates),
                     opt_out=dict(cycle.get('opt_out') or {}))


def _tuple(value):
    return tuple(value) if value is not None else None


def plan_key(actions):
    """What two plans must share to be the same plan (reasons are prose)."""
    return [(a['type'], a.get('instance'), a.get('source'), a.get('destination'),
             a.get('host'), a.get('cluster')) for a in actions]
