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

"""Ingest rate of the statistics collector: 1,000 hosts x 20 instances per period.

Builds the notification payloads computes publish and stores them with the
collector's bulk path (``ingest.insert_samples``, one transaction per batch
of ``--batch`` host samples), into SQLite and into MariaDB on 127.0.0.1:3306
(root, no password; a scratch database is created and dropped). Prints
samples/s, a sample being one host or one instance row. Target: >= 20,000/s.

    .venv/bin/python benchmarks/stats_ingest.py [--periods 3] [--batch 500]
"""

import argparse
import datetime
import os
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sqlalchemy as sa  # noqa: E402

from nova_drs.db import api  # noqa: E402
from nova_drs.db import migration  # noqa: E402
from nova_drs.db import statistics as db_statistics  # noqa: E402
from nova_drs.stats import ingest  # noqa: E402

HOSTS = 1000
INSTANCES_PER_HOST = 20


def period_payloads(period, instance_ids):
    at = (datetime.datetime(2026, 1, 1) + datetime.timedelta(minutes=period)).isoformat()
    previous = (datetime.datetime(2026, 1, 1) +
                datetime.timedelta(minutes=period - 1)).isoformat()
    payloads = []
    for host in range(HOSTS):
        payloads.append({
            'host': 'compute%04d' % host, 'hypervisor_hostname': 'compute%04d' % host,
            'compute_id': host, 'sampled_at': at,
            'host_stats': {'cpu_used_percent': 42.5, 'memory_used': 100000,
                           'memory_total': 256000, 'vcpus': 64},
            'instances': [{'instance_uuid': instance_ids[host][index], 'vcpus': 2,
                           'cpu_time': period * 10 ** 10, 'prev_cpu_time': 0,
                           'cpu_used_percent': 37.5, 'mem': 2048,
                           'block_dev_iops': period * 1000, 'prev_block_dev_iops': 0,
                           'prev_updated_at': previous}
                          for index in range(INSTANCES_PER_HOST)],
        })
    return payloads


def run(database, periods, batch):
    migration.sync(database)
    instance_ids = [[str(uuid.uuid4()) for _ in range(INSTANCES_PER_HOST)]
                    for _ in range(HOSTS)]
    rows = 0
    elapsed = 0.0
    for period in range(1, periods + 1):
        payloads = period_payloads(period, instance_ids)
        start = time.perf_counter()
        for offset in range(0, len(payloads), batch):
            hosts, instances, errors = ingest.insert_samples(
                database, payloads[offset:offset + batch])
            assert not errors, errors
            rows += hosts + instances
        elapsed += time.perf_counter() - start
    # duplicates (a redelivered period) must be harmless and are timed too
    start = time.perf_counter()
    ingest.insert_samples(database, period_payloads(periods, instance_ids)[:batch])
    duplicate_seconds = time.perf_counter() - start
    with database.reader() as session:
        stored = sum(session.execute(sa.select(sa.func.count()).select_from(table)).scalar()
                     for table in (db_statistics.HOSTS, db_statistics.INSTANCES))
    assert stored == rows == periods * HOSTS * (INSTANCES_PER_HOST + 1), (stored, rows)
    return rows, elapsed, duplicate_seconds


def report(name, rows, elapsed, duplicate_seconds, batch):
    print('%-8s %7d samples in %6.2f s = %8.0f samples/s  (redelivered batch of %d '
          'hosts ignored in %.2f s)' % (name, rows, elapsed, rows / elapsed, batch,
                                        duplicate_seconds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--periods', type=int, default=3)
    parser.add_argument('--batch', type=int, default=500,
                        help='host samples per transaction (collector batch_size)')
    parser.add_argument('--skip-mariadb', action='store_true')
    args = parser.parse_args()
    print('%d hosts x %d instances, %d periods, %d host samples per transaction'
          % (HOSTS, INSTANCES_PER_HOST, args.periods, args.batch))

    directory = tempfile.mkdtemp(prefix='nova-drs-bench-')
    sqlite_db = api.Database('sqlite:///' + os.path.join(directory, 'stats.sqlite'))
    report('SQLite', *run(sqlite_db, args.periods, args.batch), args.batch)
    sqlite_db.dispose()

    if not args.skip_mariadb:
        import pymysql
        name = 'nova_drs_bench_%s' % uuid.uuid4().hex[:8]
        admin = pymysql.connect(host='127.0.0.1', port=3306, user='root', autocommit=True)
        try:
            with admin.cursor() as cursor:
                cursor.execute('CREATE DATABASE %s' % name)
            mariadb = api.Database('mysql+pymysql://root@127.0.0.1:3306/%s' % name)
            try:
                report('MariaDB', *run(mariadb, args.periods, args.batch), args.batch)
            finally:
                mariadb.dispose()
        finally:
            with admin.cursor() as cursor:
                cursor.execute('DROP DATABASE IF EXISTS %s' % name)
            admin.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
