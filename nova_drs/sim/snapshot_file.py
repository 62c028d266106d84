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

"""Anonymised what-if datasets a user can attach to a bug report.

``--export FILE`` renames hosts h0001..., servers s00001..., aggregates
c01..., server groups g001...; times become seconds from the first cycle;
aggregate metadata keeps only the keys nova-drs reads, with numeric values
(or a known policy / automation word); reasons (prose) are dropped. What
is left is numbers and those names, so the replay of the file gives the
same figures as the replay of the database it came from.
"""

import gzip
import json

from nova_drs import cluster_policy
from nova_drs.sim import stats_replay

NUMERIC_KEYS = ('cpu_allocation_ratio', 'ram_allocation_ratio', 'min_active_hosts',
                'hosts_in_reserve', 'high_utilization', 'low_utilization',
                'overcommit_duration', 'balance_tolerance', 'drs_power_curve')
WORD_KEYS = {cluster_policy.POLICY_KEY: cluster_policy.POLICIES,
             cluster_policy.AUTOMATION_KEY: cluster_policy.AUTOMATION_LEVELS}
INSTANCE_STATES = ('active', 'paused', 'stopped')


class Names:
    """Stable replacement names, numbered in first-seen order of sorted input."""

    def __init__(self, pattern, keep=()):
        self.pattern = pattern
        self.keep = set(keep)
        self.names = {}

    def __call__(self, name):
        if name is None or name in self.keep:
            return name
        if name not in self.names:
            self.names[name] = self.pattern % (len(self.names) + 1)
        return self.names[name]


def anonymise(dataset):
    """A copy of ``dataset`` with no name, UUID, project or prose left."""
    cycles = dataset['cycles']
    t0 = cycles[0]['now']
    hosts, servers = Names('h%04d'), Names('s%05d')
    clusters, groups = Names('c%02d', keep=(cluster_policy.DEFAULT_CLUSTER,)), Names('g%03d')
    for name in sorted({h['name'] for c in cycles for h in c['hosts']}):
        hosts(name)
    for uuid in sorted({i['uuid'] for c in cycles for i in c['instances']}):
        servers(uuid)
    for name in sorted({a['name'] for c in cycles for a in c['aggregates']}):
        clusters(name)

    def shift(when):
        return None if when is None else when - t0

    out = []
    for cycle in cycles:
        out.append({
            'format': cycle['format'], 'now': shift(cycle['now']),
            'taken_at': shift(cycle['taken_at']),
            'history_since': shift(cycle['history_since']),
            'history_newest': shift(cycle['history_newest']),
            'history_length': cycle['history_length'],
            'hosts': [dict(h, name=hosts(h['name']), cluster=clusters(h['cluster']))
                      for h in cycle['hosts']],
            'instances': [dict(i, uuid=servers(i['uuid']), host=hosts(i['host']),
                               left_host=hosts(i.get('left_host')),
                               server_group=groups(i['server_group']),
                               state=i['state'] if i['state'] in INSTANCE_STATES
                               else 'other') for i in cycle['instances']],
            'migrations': [{'instance': servers(m['instance']), 'source': hosts(m['source']),
                            'destination': hosts(m['destination'])}
                           for m in cycle['migrations']],
            'aggregates': [{'name': clusters(a['name']),
                            'hosts': [hosts(h) for h in a['hosts']],
                            'metadata': _metadata(a['metadata'])}
                           for a in cycle['aggregates']],
            'actions': [_action(a, hosts, servers, clusters) for a in cycle['actions']],
            'opt_out': {servers(uuid): level
                        for uuid, level in cycle.get('opt_out', {}).items()},
        })
    return {'format': stats_replay.FORMAT, 'cycles': out,
            'host_samples': _samples(dataset['host_samples'], hosts.names, t0),
            'instance_samples': _samples(dataset['instance_samples'], servers.names, t0)}


def _metadata(metadata):
    kept = {}
    for key, value in metadata.items():
        if key in WORD_KEYS:
            if value in WORD_KEYS[key]:
                kept[key] = value
        elif key in NUMERIC_KEYS and _numbers(value):
            kept[key] = value
    return kept


def _numbers(value):
    try:
        [float(part) for part in str(value).split(',')]
    except ValueError:
        return False
    return True


def _action(action, hosts, servers, clusters):
    renamed = {'type': action['type'], 'reason': '',
               'cluster': clusters(action.get('cluster'))}
    if action['type'] == 'migrate':
        renamed.update(instance=servers(action['instance']), source=hosts(action['source']),
                       destination=hosts(action['destination']))
    else:
        renamed['host'] = hosts(action['host'])
    return renamed


def _samples(samples, names, t0):
    """Samples of the renamed keys only: a host or server no cycle saw is left out."""
    return {names[key]: [[when - t0, cpu] for when, cpu in rows]
            for key, rows in samples.items() if key in names}


def write(dataset, path):
    data = json.dumps(dataset, separators=(',', ':')).encode('utf-8')
    if path.endswith('.gz'):
        data = gzip.compress(data)
    with open(path, 'wb') as handle:
        handle.write(data)


def read(path):
    """A dataset from ``path`` (JSON, gzip-compressed when it ends in .gz)."""
    try:
        with open(path, 'rb') as handle:
            data = handle.read()
    except OSError as exc:
        raise ValueError('%s: %s' % (path, exc.strerror)) from None
    try:
        if data[:2] == b'\x1f\x8b':
            data = gzip.decompress(data)
        dataset = json.loads(data)
    except (OSError, EOFError, ValueError):
        raise ValueError('%s: not a JSON what-if dataset' % path) from None
    if not isinstance(dataset, dict) or dataset.get('format') != stats_replay.FORMAT \
            or not dataset.get('cycles'):
        raise ValueError('%s: not a %s dataset (written by nova-drs-sim --export)'
                         % (path, stats_replay.FORMAT))
    for samples in (dataset['host_samples'], dataset['instance_samples']):
        for rows in samples.values():
            rows.sort()
    return dataset
