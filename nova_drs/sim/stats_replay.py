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

"""What-if replay of the cloud's own history (``nova-drs-sim --from-stats``).

A dataset is the daemon's cycle inventories (``drs_cycle_inventory``) plus
the CPU samples the collector stored. Two uses:

* ``reproduce``: rebuild each cycle's snapshot and plan it with the daemon's
  own cluster planner: the plan must be the one the daemon made;
* ``StatsSimulation``: the simulator's engine on the real hosts (vCPUs,
  RAM, allocation ratios, clusters), servers (flavor vCPUs and RAM, where
  they started, when they appeared and went) and their CPU histories, one
  step per recorded cycle, through any policy.
"""

import datetime
import statistics

from nova_drs import cluster_policy
from nova_drs import exception
from nova_drs import membership
from nova_drs.db import cycle_inventory
from nova_drs.db import inventory as db_inventory
from nova_drs.db import statistics as db_statistics
from nova_drs.loadbalancer import model
from nova_drs.sim import datacenter
from nova_drs.sim import engine

FORMAT = 'nova-drs-sim-stats/1'


def load(database, start):
    """The dataset of the cycles from ``start`` (naive UTC) on."""
    cycles = [body for _taken, body in db_inventory.since(database, start)]
    if not cycles:
        raise exception.NoData('no daemon cycle recorded since %s UTC: the replay needs '
                               'nova-loadbalancer (not --dry-run) to have run on this database'
                               % start.isoformat(sep=' ', timespec='seconds'))
    oldest = min((c['history_since'] for c in cycles if c['history_since'] is not None),
                 default=cycles[0]['now'])
    since = _datetime(oldest)
    host_rows = db_statistics.host_cpu_since(database, since)
    instance_rows = db_statistics.instance_cpu_since(database, since)
    return {'format': FORMAT, 'cycles': cycles,
            'host_samples': _by_key(host_rows), 'instance_samples': _by_key(instance_rows)}


def _datetime(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(
        tzinfo=None)


def _by_key(rows):
    samples = {}
    for key, sampled_at, cpu in rows:
        samples.setdefault(key, []).append((cycle_inventory.epoch(sampled_at), cpu))
    return samples


def reproduce(dataset, planner):
    """[(cycle now, the daemon's plan, the replay's plan)] as recorded action dicts."""
    results = []
    for cycle in dataset['cycles']:
        view = cycle_inventory.rebuild(cycle, dataset['host_samples'],
                                       dataset['instance_samples'])
        replayed = [cycle_inventory.recorded(a) for a in planner.plan(view)]
        results.append((cycle['now'], cycle['actions'], replayed))
    return results


def interval_of(cycles):
    """Seconds per step: the median time between recorded cycles."""
    times = [c['now'] for c in cycles]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
    return statistics.median(gaps) if gaps else 60.0


class StatsSimulation(engine.Simulation):
    """The engine on recorded hosts and servers instead of CloudSim's centre.

    Capacity is counted in vCPUs as the daemon counts it; hosts whose
    cluster policy resolves to ``none`` are left out (never touched).
    """

    def __init__(self, dataset, policy_name, default_policy, power_curve, params=None,
                 seed=0, ping_pong_window=3600.0):
        cycles = dataset['cycles']
        hosts = _latest(cycles, 'hosts', 'name')
        managed = _managed(cycles[-1]['aggregates'], hosts, default_policy)
        self.records = [hosts[name] for name in sorted(managed)]
        if not self.records:
            raise exception.NoData('no host in a drs_policy aggregate: nothing to replay')
        servers = _latest(cycles, 'instances', 'uuid')
        self.present = _presence(cycles, managed)
        names = sorted(uuid for uuid in servers if uuid in self.present)
        if not names:
            raise exception.NoData('no server on the hosts of drs_policy aggregates: '
                                   'nothing to replay')
        history_length = cycles[-1]['history_length']
        traces = [_trace(dataset['instance_samples'].get(uuid, ()), cycles)
                  for uuid in names]
        super().__init__(names, traces, policy_name, hosts=len(self.records),
                         interval=interval_of(cycles), seed=seed, retire_idle=True,
                         params=params, ping_pong_window=ping_pong_window)
        self.history_length = history_length
        self.host_names = [h['name'] for h in self.records]
        self.models = [datacenter.HostModel(h['name'], max(1, int(h['mips'])), 1.0,
                                            h['ram_mb'], 1000.0,
                                            _curve(h, power_curve)) for h in self.records]
        self.capacity = [float(m.pes) for m in self.models]
        self.servers = [servers[uuid] for uuid in names]
        self.vm_types = [(float(s['mips']), s['ram_mb']) for s in self.servers]
        self.migration_time = [datacenter.migration_seconds(ram, 1000.0)
                               for _mips, ram in self.vm_types]

    def initial_placement(self):
        """Where each server was when the period started (None: not there yet)."""
        index = {name: i for i, name in enumerate(self.host_names)}
        return [index[self.present[s['uuid']][0][1]] if self.present[s['uuid']][0][0] == 0
                else None for s in self.servers]

    def _retire(self, host_of, k, following):
        """Servers arrive where nova put them and leave when they were deleted."""
        index = {name: i for i, name in enumerate(self.host_names)}
        for v, server in enumerate(self.servers):
            (first, host), last = self.present[server['uuid']]
            if k == first:
                host_of[v] = index[host]
            elif k > last and host_of[v] is not None:
                host_of[v] = None
                self.retired += 1

    def _host(self, i, state, ratio=None):
        record = self.records[i]
        return model.Host(
            name=record['name'], vcpus=record['vcpus'], ram_mb=record['ram_mb'],
            mips=self.capacity[i], pe_mips=1.0, cluster=record['cluster'],
            cpu_allocation_ratio=record['cpu_allocation_ratio'],
            ram_allocation_ratio=record['ram_allocation_ratio'], power_state=state,
            power_curve=self.models[i].curve, suspendable=record['suspendable'])

    def _snapshot(self, k, host_of, last_moved):
        occupied = set(host_of)
        hosts = tuple(self._host(i, model.ACTIVE if self.hosts_stay_on or i in occupied
                                 else model.SUSPENDED) for i in range(len(self.records)))
        start = max(0, k + 1 - self.history_length)
        instances = tuple(
            model.Instance(uuid=s['uuid'], host=self.host_names[host_of[v]],
                           vcpus=s['vcpus'], ram_mb=s['ram_mb'], mips=float(s['mips']),
                           cpu_history=tuple(self.traces[v][start:k + 1]),
                           state=s['state'], server_group=s['server_group'],
                           group_policy=s['group_policy'], last_migrated_at=last_moved[v],
                           left_host=self.left_host[v])
            for v, s in enumerate(self.servers) if host_of[v] is not None)
        return model.Snapshot(hosts, instances, now=k * self.interval)

    def _host_load(self, host_of, demand, migrating=(), after=None):
        """(allocated, requested) vCPUs per host: a server's demand is a share
        of its own vCPUs, so only the host's capacity caps it."""
        allocated = [0.0] * len(self.capacity)
        for v, i in enumerate(host_of):
            if i is not None:
                allocated[i] += demand[v]
        requested = list(allocated)
        for v in migrating:
            requested[after[v]] += demand[v]
            allocated[after[v]] += 0.1 * demand[v]
        return [(min(a, c), r) for a, r, c in zip(allocated, requested, self.capacity,
                                                  strict=True)]


def _latest(cycles, kind, key):
    found = {}
    for cycle in cycles:
        for item in cycle[kind]:
            found[item[key]] = item
    return found


def _managed(aggregates, hosts, default_policy):
    resolver = cluster_policy.Resolver()
    aggregates_of = membership.of_listed(aggregates)
    return {name for name in hosts
            if resolver.host_policy(aggregates_of.get(name, ()), default_policy)
            != cluster_policy.NONE}


def _presence(cycles, managed):
    """{uuid: ((first step, host there), last step)} of servers on managed hosts."""
    present = {}
    for k, cycle in enumerate(cycles):
        for server in cycle['instances']:
            if server['host'] not in managed:
                continue
            first = present.get(server['uuid'], ((k, server['host']), k))[0]
            present[server['uuid']] = (first, k)
    return present


def _trace(samples, cycles):
    """Per step: the newest CPU fraction sampled at or before it (0 before any)."""
    values, i, current = [], 0, 0.0
    for cycle in cycles:
        while i < len(samples) and samples[i][0] <= cycle['now']:
            current = min(1.0, (samples[i][1] or 0.0) / 100.0)
            i += 1
        values.append(current)
    return values


def _curve(host, default):
    return tuple(host['power_curve']) if host.get('power_curve') else tuple(default)
