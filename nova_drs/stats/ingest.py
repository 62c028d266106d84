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

"""Samples published by the compute monitor, turned into statistics rows.

``insert_samples`` validates a batch and stores it with ``db.statistics``;
an invalid sample is left out and reported, never raised. Invalid means
malformed (no host, a time that is not ISO 8601, a number that is not one)
or out of range (``BOUNDS``: percentages outside 0..100, negative or
non-finite figures, more memory used than the host has): a value the
monitor cannot send is not a load figure the daemon should plan on.
Which host a sample may name is the collector's check (its publisher).

``sampled_at`` is the compute's clock. A sample stamped more than
``MAX_AHEAD`` after it was received (the collector's clock) comes from a
compute whose clock is ahead: it is stored with the receive time instead,
and a warning names the host once. It is kept rather than refused so the
host stays managed (refused samples would make it stale, then excluded),
and its stamp cannot sit in the future, where it would stay its host's
newest sample, and escape the retention purge, until the clock got there.
"""

import datetime
import math

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs import exception
from nova_drs.db import statistics

_HOST_FIELDS = ('memory_total', 'memory_used', 'cpu_used_percent', 'vcpus')
_INSTANCE_FIELDS = ('libvirt_id', 'vcpus', 'cpu_time', 'prev_cpu_time', 'cpu_used_percent',
                    'mem', 'block_dev_iops', 'prev_block_dev_iops')


LOG = logging.getLogger(__name__)

#: How far after its receive time a sample may be stamped: beyond this the
#: compute's clock is wrong (transit only makes samples arrive later).
MAX_AHEAD = datetime.timedelta(seconds=60)
#: Hosts already warned about (one warning per host and collector process).
_warned_ahead = set()


#: (lowest, highest) of every number a sample holds; None = unbounded.
#: CPU percentages are of the host's / the instance's own vCPUs (the monitor
#: clamps them to 0..100); counters and memory only grow from 0; integers
#: fit the BIGINT columns.
BIGINT_MAX = 2 ** 63 - 1
BOUNDS = {'cpu_used_percent': (0.0, 100.0)}
DEFAULT_BOUNDS = (0, BIGINT_MAX)

#: Why a sample was refused: the ``reason`` label of the collector's metric.
MALFORMED = 'malformed'
OUT_OF_RANGE = 'out_of_range'
WRONG_SENDER = 'wrong_sender'


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
            raise exception.InvalidSample('%s=%r is not an ISO 8601 time' % (field, value),
                                          MALFORMED) from None
    if cache is not None:
        cache[value] = parsed
    return parsed


def _number(row, field, kind):
    value = row.get(field)
    if value is None:
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise exception.InvalidSample('%s=%r is not a number' % (field, value),
                                      MALFORMED) from None
    low, high = BOUNDS.get(field, DEFAULT_BOUNDS)
    if (isinstance(number, float) and not math.isfinite(number)) \
            or not low <= number <= high:
        raise exception.InvalidSample('%s=%r is outside %s..%s' % (field, value, low, high),
                                      OUT_OF_RANGE)
    return number


def rows_from_sample(sample, now, times=None):
    """(host row, instance rows) of one published sample; InvalidSample if unusable.

    ``times`` memoizes parsed timestamps across the samples of a batch.
    """
    if not isinstance(sample, dict) or not sample.get('host'):
        raise exception.InvalidSample('sample without host', MALFORMED)
    sampled_at = _time(sample.get('sampled_at'), 'sampled_at', times)
    if sampled_at is None:
        raise exception.InvalidSample('sample of %s without sampled_at' % sample['host'],
                                      MALFORMED)
    ahead = sampled_at - now
    if ahead > MAX_AHEAD:
        _warn_ahead(sample['host'], ahead)
        sampled_at = now
    else:
        ahead = None
    host_stats = sample.get('host_stats') or {}
    host_row = {'host': sample['host'], 'sampled_at': sampled_at,
                'hypervisor_hostname': sample.get('hypervisor_hostname'),
                'compute_id': _number(sample, 'compute_id', int),
                'deleted': 0}
    for field in _HOST_FIELDS:
        host_row[field] = _number(host_stats, field,
                                  float if field == 'cpu_used_percent' else int)
    if None not in (host_row['memory_used'], host_row['memory_total']) \
            and host_row['memory_used'] > host_row['memory_total']:
        raise exception.InvalidSample('memory_used=%d is more than memory_total=%d'
                                      % (host_row['memory_used'], host_row['memory_total']),
                                      OUT_OF_RANGE)
    instance_rows = []
    for entry in sample.get('instances') or ():
        if not isinstance(entry, dict) or not entry.get('instance_uuid'):
            raise exception.InvalidSample('instance sample of %s without instance_uuid'
                                          % sample['host'], MALFORMED)
        previous = _time(entry.get('prev_updated_at'), 'prev_updated_at', times)
        if previous is not None and ahead is not None:
            previous -= ahead  # same clock as sampled_at: the I/O rate keeps its interval
        row = {'instance_uuid': str(entry['instance_uuid']), 'host': sample['host'],
               'sampled_at': sampled_at, 'deleted': 0,
               'prev_updated_at': previous}
        for field in _INSTANCE_FIELDS:
            row[field] = _number(entry, field,
                                 float if field == 'cpu_used_percent' else int)
        instance_rows.append(row)
    return host_row, instance_rows


def _warn_ahead(host, ahead):
    if host not in _warned_ahead:
        _warned_ahead.add(host)
        LOG.warning('nova-drs collector: samples of %s are stamped %d s after they were '
                    'received (its clock is ahead; fix its NTP): they are stored with '
                    'their receive time', host, ahead.total_seconds())


def insert_samples(database, samples):
    """Store many samples in one transaction; returns (hosts, instances, errors).

    ``errors`` lists the InvalidSample of each sample left out. The
    database stamps when it received them (``created_at``).
    """
    now = timeutils.utcnow()
    host_rows, instance_rows, errors, times = [], [], [], {}
    for sample in samples:
        try:
            host_row, rows = rows_from_sample(sample, now, times)
        except exception.InvalidSample as exc:
            errors.append(exc)
            continue
        host_rows.append(host_row)
        instance_rows.extend(rows)
    hosts, instances = statistics.insert(database, host_rows, instance_rows)
    return hosts, instances, errors
