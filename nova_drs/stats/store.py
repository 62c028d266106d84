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

"""Statistics in the DRS database: bulk ingest, retention purge, latest samples.

Rows are unique per (host, sampled_at) and (instance_uuid, sampled_at);
inserts skip existing rows (INSERT IGNORE / ON CONFLICT DO NOTHING), so a
duplicated or late notification changes nothing.
"""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from nova_drs.db import inventory
from nova_drs.db import models

HOSTS = models.ComputeNodeStats.__table__
INSTANCES = models.InstanceStats.__table__

_HOST_FIELDS = ('memory_total', 'memory_used', 'cpu_used_percent', 'vcpus')
_INSTANCE_FIELDS = ('libvirt_id', 'vcpus', 'cpu_time', 'prev_cpu_time', 'cpu_used_percent',
                    'mem', 'block_dev_iops', 'prev_block_dev_iops')


class InvalidSample(ValueError):
    """A sample that cannot be stored; the message says which field."""


def _time(value, field, cache=None):
    if value is None:
        return None
    if cache is not None and value in cache:
        return cache[value]
    if isinstance(value, datetime.datetime):
        parsed = timeutils.normalize_time(value)
    else:
        try:
            parsed = timeutils.normalize_time(datetime.datetime.fromisoformat(value))
        except (ValueError, TypeError):
            raise InvalidSample('%s=%r is not an ISO 8601 time' % (field, value)) from None
    if cache is not None:
        cache[value] = parsed
    return parsed


def _number(row, field, kind):
    value = row.get(field)
    if value is None:
        return None
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise InvalidSample('%s=%r is not a number' % (field, value)) from None


def rows_from_sample(sample, now, times=None):
    """(host row, instance rows) of one published sample; InvalidSample if unusable.

    ``times`` memoizes parsed timestamps across the samples of a batch.
    """
    if not isinstance(sample, dict) or not sample.get('host'):
        raise InvalidSample('sample without host')
    sampled_at = _time(sample.get('sampled_at'), 'sampled_at', times)
    if sampled_at is None:
        raise InvalidSample('sample of %s without sampled_at' % sample['host'])
    host_stats = sample.get('host_stats') or {}
    host_row = {'host': sample['host'], 'sampled_at': sampled_at,
                'hypervisor_hostname': sample.get('hypervisor_hostname'),
                'compute_id': _number(sample, 'compute_id', int),
                'created_at': now, 'deleted': 0}
    for field in _HOST_FIELDS:
        host_row[field] = _number(host_stats, field,
                                  float if field == 'cpu_used_percent' else int)
    instance_rows = []
    for entry in sample.get('instances') or ():
        if not isinstance(entry, dict) or not entry.get('instance_uuid'):
            raise InvalidSample('instance sample of %s without instance_uuid'
                                % sample['host'])
        row = {'instance_uuid': str(entry['instance_uuid']), 'host': sample['host'],
               'sampled_at': sampled_at, 'created_at': now, 'deleted': 0,
               'prev_updated_at': _time(entry.get('prev_updated_at'), 'prev_updated_at',
                                        times)}
        for field in _INSTANCE_FIELDS:
            row[field] = _number(entry, field,
                                 float if field == 'cpu_used_percent' else int)
        instance_rows.append(row)
    return host_row, instance_rows


def _ignore_statement(dialect, table):
    if dialect == 'sqlite':
        return sqlite.insert(table).on_conflict_do_nothing()
    if dialect == 'postgresql':
        return postgresql.insert(table).on_conflict_do_nothing()
    if dialect == 'mysql':
        return table.insert().prefix_with('IGNORE')
    raise NotImplementedError('statistics need SQLite, MySQL/MariaDB or PostgreSQL, '
                              'not %s' % dialect)


def _insert_ignoring_duplicates(session, table, rows):
    """One executemany straight on the driver: the hot path of the collector.

    The statement is compiled by SQLAlchemy once; values are converted with
    the dialect's own bind processors (memoized: a batch has few distinct
    timestamps), which skips SQLAlchemy's per-row parameter processing.
    """
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    columns = list(rows[0])
    if dialect.name == 'mysql':
        return _mysql_insert_ignore(connection, table, columns, rows)
    compiled = _ignore_statement(dialect.name, table).values(
        {name: sa.bindparam(name) for name in columns}).compile(dialect=dialect)
    converters = {}
    for name in columns:
        processor = table.c[name].type._cached_bind_processor(dialect)
        if processor is not None:
            converters[name] = (processor, {})

    def value(row, name):
        raw = row[name]
        if raw is None or name not in converters:
            return raw
        processor, memo = converters[name]
        if raw not in memo:
            memo[raw] = processor(raw)
        return memo[raw]

    if compiled.positional:
        order = compiled.positiontup
        params = [tuple(value(row, name) for name in order) for row in rows]
    else:
        params = [{name: value(row, name) for name in columns} for row in rows]
    connection.exec_driver_sql(str(compiled), params)


_MYSQL_CHUNK = 5000


def _mysql_insert_ignore(connection, table, columns, rows):
    """Multi-row INSERT IGNORE with literals escaped by the driver, memoized.

    pymysql's executemany escapes every value of every row through its
    generic path; samples repeat hosts and timestamps and are otherwise
    numbers, so escaping each distinct value once is several times faster.
    """
    dbapi_connection = connection.connection.dbapi_connection
    escape = dbapi_connection.escape
    memo = {}

    def literal(value):
        if value is None:
            return 'NULL'
        if type(value) is int:
            return str(value)
        key = (type(value), value)
        if key not in memo:
            memo[key] = escape(value)
        return memo[key]

    head = 'INSERT IGNORE INTO %s (%s) VALUES ' % (
        table.name, ', '.join('`%s`' % name for name in columns))
    with dbapi_connection.cursor() as cursor:
        for offset in range(0, len(rows), _MYSQL_CHUNK):
            cursor.execute(head + ','.join(
                '(%s)' % ','.join([literal(row[name]) for name in columns])
                for row in rows[offset:offset + _MYSQL_CHUNK]))


def _unique(rows, key):
    """Drop rows repeating an earlier key in the same batch (first one wins)."""
    seen = set()
    kept = []
    for row in rows:
        identity = tuple(row[field] for field in key)
        if identity not in seen:
            seen.add(identity)
            kept.append(row)
    return kept


def insert_samples(database, samples):
    """Store many samples in one transaction; returns (hosts, instances, errors).

    ``errors`` lists the InvalidSample messages of samples left out.
    """
    now = timeutils.utcnow()
    host_rows, instance_rows, errors, times = [], [], [], {}
    for sample in samples:
        try:
            host_row, rows = rows_from_sample(sample, now, times)
        except InvalidSample as exc:
            errors.append(str(exc))
            continue
        host_rows.append(host_row)
        instance_rows.extend(rows)
    host_rows = _unique(host_rows, ('host', 'sampled_at'))
    instance_rows = _unique(instance_rows, ('instance_uuid', 'sampled_at'))
    with database.writer() as session:
        _insert_ignoring_duplicates(session, HOSTS, host_rows)
        _insert_ignoring_duplicates(session, INSTANCES, instance_rows)
    return len(host_rows), len(instance_rows), errors


def purge(database, before):
    """Delete samples (and cycle inventories) taken strictly before ``before``;
    returns (hosts, instances)."""
    with database.writer() as session:
        hosts = session.execute(HOSTS.delete().where(HOSTS.c.sampled_at < before))
        instances = session.execute(
            INSTANCES.delete().where(INSTANCES.c.sampled_at < before))
        inventory.purge(session, before)
        return hosts.rowcount, instances.rowcount


def purge_older_than(database, seconds, now=None):
    now = now or timeutils.utcnow()
    return purge(database, now - datetime.timedelta(seconds=seconds))


def _host_dict(row):
    return {'host': row.host, 'hypervisor_hostname': row.hypervisor_hostname,
            'compute_id': row.compute_id, 'sampled_at': row.sampled_at,
            'cpu_used_percent': row.cpu_used_percent, 'memory_used': row.memory_used,
            'memory_total': row.memory_total, 'vcpus': row.vcpus}


def _instance_dict(row):
    iops = None
    if (row.prev_block_dev_iops is not None and row.block_dev_iops is not None and
            row.prev_updated_at is not None):
        elapsed = (row.sampled_at - row.prev_updated_at).total_seconds()
        if elapsed > 0 and row.block_dev_iops >= row.prev_block_dev_iops:
            iops = (row.block_dev_iops - row.prev_block_dev_iops) / elapsed
    return {'instance_uuid': row.instance_uuid, 'host': row.host,
            'sampled_at': row.sampled_at, 'vcpus': row.vcpus,
            'cpu_time': row.cpu_time, 'cpu_used_percent': row.cpu_used_percent,
            'mem': row.mem, 'block_dev_iops': row.block_dev_iops, 'iops': iops}


def _latest_per(session, table, key_column, keys, n):
    rank = sa.func.row_number().over(partition_by=key_column,
                                     order_by=table.c.sampled_at.desc()).label('rank')
    ranked = sa.select(table, rank).where(key_column.in_(keys)).subquery()
    return session.execute(
        sa.select(ranked).where(ranked.c.rank <= n)
        .order_by(ranked.c[key_column.name], ranked.c.sampled_at.desc())).all()


def latest(database, host, n=1):
    """The ``n`` newest samples of ``host``, newest first."""
    with database.reader() as session:
        rows = session.execute(sa.select(HOSTS).where(HOSTS.c.host == host)
                               .order_by(HOSTS.c.sampled_at.desc()).limit(n)).all()
    return [_host_dict(row) for row in rows]


def latest_hosts(database, hosts, n=1):
    """{host: its ``n`` newest samples, newest first} in one query."""
    result = {host: [] for host in hosts}
    if not result:
        return result
    with database.reader() as session:
        for row in _latest_per(session, HOSTS, HOSTS.c.host, list(result), n):
            result[row.host].append(_host_dict(row))
    return result


def latest_instances(database, uuids, n=1):
    """{instance_uuid: its ``n`` newest samples, newest first} in one query."""
    result = {uuid: [] for uuid in uuids}
    if not result:
        return result
    with database.reader() as session:
        for row in _latest_per(session, INSTANCES, INSTANCES.c.instance_uuid,
                               list(result), n):
            result[row.instance_uuid].append(_instance_dict(row))
    return result


_LATE_CHUNK = 500


def host_cpu_since(database, since):
    """(host, sampled_at, cpu_used_percent) of host samples taken after ``since``,
    oldest first: one range of the sampled_at index, never a list of hosts."""
    with database.reader() as session:
        return session.execute(
            sa.select(HOSTS.c.host, HOSTS.c.sampled_at, HOSTS.c.cpu_used_percent)
            .where(HOSTS.c.sampled_at > since).order_by(HOSTS.c.sampled_at)).all()


def instance_cpu_since(database, after, late=()):
    """(instance_uuid, sampled_at, cpu_used_percent) of instance samples taken
    after ``after``, plus those of the ``late`` (host, sampled_at) host samples.

    A host sample and its instances are stored in one transaction, so a
    caller that holds every host sample up to ``after`` finds each instance
    sample it lacks here, without re-reading the ones it holds (at 100,000
    instances a round is 100,000 rows).
    """
    columns = (INSTANCES.c.instance_uuid, INSTANCES.c.sampled_at,
               INSTANCES.c.cpu_used_percent)
    late = sorted(late)
    with database.reader() as session:
        rows = session.execute(sa.select(*columns).where(INSTANCES.c.sampled_at > after)
                               .order_by(INSTANCES.c.sampled_at)).all()
        for start in range(0, len(late), _LATE_CHUNK):
            pairs = sa.tuple_(INSTANCES.c.host, INSTANCES.c.sampled_at)
            rows += session.execute(sa.select(*columns).where(
                pairs.in_(late[start:start + _LATE_CHUNK]))).all()
    return rows
