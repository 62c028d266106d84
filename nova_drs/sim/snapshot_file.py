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

``read`` takes files from anyone (a bug report's attachment): it reads at
most ``MAX_BYTES`` of JSON (after decompression, counted while it
inflates, so a small gzip bomb stops at the cap) and checks the whole
shape and every type before the replay sees it; whatever is wrong is one
``DatasetError`` line.
"""

import dataclasses
import gzip
import json
import zlib

import jsonschema

from nova_drs import aggregate_keys
from nova_drs import cluster_policy
from nova_drs import exception
from nova_drs.loadbalancer import model
from nova_drs.sim import stats_replay

NUMERIC_KEYS = ('cpu_allocation_ratio', 'ram_allocation_ratio', 'min_active_hosts',
                'hosts_in_reserve', 'high_utilization', 'low_utilization',
                'overcommit_duration', 'balance_tolerance', 'drs_power_curve')
WORD_KEYS = {aggregate_keys.POLICY_KEY: cluster_policy.POLICIES,
             aggregate_keys.AUTOMATION_KEY: cluster_policy.AUTOMATION_LEVELS}
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


#: Most bytes of JSON ``read`` accepts, counted after decompression: a
#: month of 5-minute cycles of a few hundred hosts is well under it; a
#: larger file is refused before it fills the memory.
MAX_BYTES = 1024 * 1024 * 1024
_CHUNK = 1024 * 1024


_JSON_TYPES = {str: 'string', int: 'integer', float: 'number', bool: 'boolean',
               tuple: 'array'}


def _record_schema(cls):
    """JSON schema of one recorded ``cls`` (a model dataclass, histories left out)."""
    properties, required = {}, []
    for field in dataclasses.fields(cls):
        if field.name == 'cpu_history':
            continue
        kind = _JSON_TYPES[field.type]
        if field.default is None:
            kind = [kind, 'null']
        properties[field.name] = {'type': kind}
        if field.default is dataclasses.MISSING:
            required.append(field.name)
    return {'type': 'object', 'properties': properties, 'required': required,
            'additionalProperties': False}


_TIME = {'type': ['number', 'null']}
_NAME = {'type': ['string', 'null']}
_SAMPLES = {'type': 'object', 'additionalProperties': {
    'type': 'array', 'items': {'type': 'array', 'minItems': 2, 'maxItems': 2,
                               'items': [{'type': 'number'}, {'type': ['number', 'null']}]}}}
_CYCLE = {
    'type': 'object',
    'required': ['format', 'now', 'taken_at', 'history_since', 'history_newest',
                 'history_length', 'hosts', 'instances', 'migrations', 'aggregates',
                 'actions'],
    'properties': {
        'format': {'type': 'string'}, 'now': {'type': 'number'}, 'taken_at': _TIME,
        'history_since': _TIME, 'history_newest': _TIME,
        'history_length': {'type': 'integer', 'minimum': 0},
        'hosts': {'type': 'array', 'items': _record_schema(model.Host)},
        'instances': {'type': 'array', 'items': _record_schema(model.Instance)},
        'migrations': {'type': 'array', 'items': _record_schema(model.InFlightMigration)},
        'aggregates': {'type': 'array', 'items': {
            'type': 'object', 'required': ['name', 'hosts', 'metadata'],
            'properties': {'name': {'type': 'string'},
                           'hosts': {'type': 'array', 'items': {'type': 'string'}},
                           'metadata': {'type': 'object',
                                        'additionalProperties': {'type': 'string'}}}}},
        'actions': {'type': 'array', 'items': {
            'type': 'object', 'required': ['type'],
            'properties': {'type': {'type': 'string'}, 'instance': _NAME, 'source': _NAME,
                           'destination': _NAME, 'host': _NAME, 'cluster': _NAME,
                           'reason': _NAME},
            'if': {'properties': {'type': {'const': 'migrate'}}},
            'then': {'required': ['instance', 'source', 'destination']},
            'else': {'required': ['host']}}},
        'opt_out': {'type': 'object', 'additionalProperties': {'type': 'string'}},
    },
}
#: What ``read`` accepts: what ``stats_replay.load`` and ``anonymise`` write.
SCHEMA = {
    'type': 'object',
    'required': ['format', 'cycles', 'host_samples', 'instance_samples'],
    'properties': {
        'format': {'const': stats_replay.FORMAT},
        'cycles': {'type': 'array', 'minItems': 1, 'items': _CYCLE},
        'host_samples': _SAMPLES,
        'instance_samples': _SAMPLES,
    },
}


def _read_capped(handle, path, limit):
    """At most ``limit`` bytes of ``handle``, read a chunk at a time."""
    chunks, size = [], 0
    while True:
        chunk = handle.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b''.join(chunks)
        size += len(chunk)
        if size > limit:
            raise exception.DatasetError('%s: more than %d bytes of JSON (the import limit)'
                                         % (path, limit))
        chunks.append(chunk)


def _where(error):
    return '/'.join(str(part) for part in error.absolute_path) or 'top level'


def read(path, limit=MAX_BYTES):
    """A dataset from ``path`` (JSON, gzip-compressed when it starts so).

    DatasetError (one line) for a missing, unreadable, oversized (more
    than ``limit`` bytes once decompressed), corrupt or wrongly shaped file.
    """
    try:
        with open(path, 'rb') as raw:
            if raw.read(2) == b'\x1f\x8b':
                raw.seek(0)
                with gzip.GzipFile(fileobj=raw) as inflated:
                    data = _read_capped(inflated, path, limit)
            else:
                raw.seek(0)
                data = _read_capped(raw, path, limit)
    except (EOFError, gzip.BadGzipFile, zlib.error):
        raise exception.DatasetError('%s: corrupt or truncated gzip file' % path) from None
    except OSError as exc:
        raise exception.DatasetError('%s: %s' % (path, exc.strerror)) from None
    try:
        dataset = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise exception.DatasetError('%s: not a JSON what-if dataset (%s)'
                                     % (path, str(exc).splitlines()[0])) from None
    if not isinstance(dataset, dict) or dataset.get('format') != stats_replay.FORMAT:
        raise exception.DatasetError('%s: not a %s dataset (written by nova-drs-sim --export)'
                                     % (path, stats_replay.FORMAT))
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft7Validator(SCHEMA).iter_errors(dataset))
    if error is not None:
        raise exception.DatasetError('%s: malformed %s dataset at %s: %s'
                                     % (path, stats_replay.FORMAT, _where(error),
                                        error.message.splitlines()[0][:200]))
    for samples in (dataset['host_samples'], dataset['instance_samples']):
        for rows in samples.values():
            rows.sort()
    return dataset
