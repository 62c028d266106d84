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

"""Bulk ingest, duplicates, purge boundaries and latest-sample queries.

On SQLite here; tests/component/stats/test_store.py runs ``StoreTests`` on
MariaDB and PostgreSQL.
"""

import datetime
import os
import tempfile
import unittest

import sqlalchemy as sa

from nova_drs.db import api
from nova_drs.db import migration
from nova_drs.db import statistics as db_statistics
from nova_drs.stats import collector
from nova_drs.stats import ingest

T0 = datetime.datetime(2026, 11, 22, 12, 0, 0)


def sample(host, minute, uuids=(), mac=None, cpu_times=None):
    at = T0 + datetime.timedelta(minutes=minute)
    payload = {
        'host': host, 'hypervisor_hostname': host, 'compute_id': 1,
        'sampled_at': at.isoformat(),
        'host_stats': {'cpu_used_percent': 10.0 + minute, 'memory_used': 100,
                       'memory_total': 1000, 'vcpus': 4},
        'instances': [{'instance_uuid': uuid, 'vcpus': 1,
                       'cpu_time': (cpu_times or {}).get(uuid, minute),
                       'cpu_used_percent': float(minute), 'mem': 64,
                       'block_dev_iops': 600 * minute,
                       'prev_block_dev_iops': 600 * (minute - 1) if minute else None,
                       'prev_updated_at': (at - datetime.timedelta(minutes=1)).isoformat()
                       if minute else None}
                      for uuid in uuids],
    }
    if mac:
        payload['mac_to_wake'] = mac
    return payload


class StoreTests:
    """Run against every database kind: SQLite below, the servers in tests/component."""

    def test_insert_and_latest(self):
        ingest.insert_samples(self.db, [sample('h1', m, ['u1', 'u2']) for m in range(5)])
        latest = db_statistics.latest(self.db, 'h1', 2)
        self.assertEqual([T0 + datetime.timedelta(minutes=4),
                          T0 + datetime.timedelta(minutes=3)],
                         [row['sampled_at'] for row in latest])
        self.assertEqual(14.0, latest[0]['cpu_used_percent'])
        per_instance = db_statistics.latest_instances(self.db, ['u1', 'u2', 'u3'], 3)
        self.assertEqual([4, 3, 2], [row['cpu_time'] for row in per_instance['u1']])
        self.assertEqual([], per_instance['u3'])
        self.assertAlmostEqual(10.0, per_instance['u2'][0]['iops'])
        hosts = db_statistics.latest_hosts(self.db, ['h1', 'h2'], 1)
        self.assertEqual(1, len(hosts['h1']))
        self.assertEqual([], hosts['h2'])

    def test_duplicates_and_late_samples_are_harmless(self):
        ingest.insert_samples(self.db, [sample('h1', 1, ['u1'], cpu_times={'u1': 111})])
        hosts, instances, errors = ingest.insert_samples(self.db, [
            sample('h1', 1, ['u1'], cpu_times={'u1': 999}),  # duplicate
            sample('h1', 1, ['u1']),                          # duplicate in the batch
            sample('h1', 0, ['u1']),                          # late
        ])
        self.assertEqual((2, 2, []), (hosts, instances, errors))
        rows = db_statistics.latest_instances(self.db, ['u1'], 5)['u1']
        self.assertEqual([111, 0], [row['cpu_time'] for row in rows])

    def test_invalid_samples_are_reported_not_stored(self):
        bad_time = sample('h1', 1)
        bad_time['sampled_at'] = 'yesterday'
        bad_number = sample('h2', 1)
        bad_number['host_stats']['vcpus'] = 'four'
        hosts, _, errors = ingest.insert_samples(
            self.db, [bad_time, bad_number, {'no': 'host'}, 'junk', sample('h3', 1)])
        self.assertEqual(1, hosts)
        self.assertEqual(4, len(errors))
        self.assertIn('sampled_at', str(errors[0]))
        self.assertIn('vcpus', str(errors[1]))
        self.assertEqual({ingest.MALFORMED}, {error.reason for error in errors})

    def test_purge_boundaries(self):
        ingest.insert_samples(self.db, [sample('h1', m, ['u1']) for m in range(4)])
        cutoff = T0 + datetime.timedelta(minutes=2)
        self.assertEqual((2, 2), db_statistics.purge(self.db, cutoff))
        remaining = [row['sampled_at'] for row in db_statistics.latest(self.db, 'h1', 10)]
        self.assertEqual([T0 + datetime.timedelta(minutes=3), cutoff], remaining)
        self.assertEqual((0, 0), db_statistics.purge(self.db, cutoff))

    def test_retention_is_judged_on_the_database_clock(self):
        ingest.insert_samples(self.db, [sample('h1', m, ['u1']) for m in range(2)])
        # Taken days ago but received just now (a backlog, a compute behind):
        # kept until the daemon could read them.
        self.assertEqual((0, 0), db_statistics.purge_older_than(self.db, 60))
        with self.db.writer() as session:
            received = db_statistics.server_now(session)
            for table in (db_statistics.HOSTS, db_statistics.INSTANCES):
                session.execute(table.update().values(
                    created_at=received - datetime.timedelta(seconds=61)))
        self.assertEqual((2, 2), db_statistics.purge_older_than(self.db, 60))

    def test_the_database_stamps_when_it_received_a_sample(self):
        with self.db.reader() as session:
            before = db_statistics.server_now(session)
        ingest.insert_samples(self.db, [sample('h1', 0, ['u1'])])
        with self.db.reader() as session:
            after = db_statistics.server_now(session)
            stamps = [session.execute(sa.select(table.c.created_at)).scalar_one()
                      for table in (db_statistics.HOSTS, db_statistics.INSTANCES)]
        for stamp in stamps:   # DATETIME without fractions on MariaDB: whole seconds
            self.assertLessEqual(before.replace(microsecond=0), stamp)
            self.assertLessEqual(stamp, after + datetime.timedelta(seconds=1))

    def test_a_sample_stamped_in_the_future_takes_its_receive_time(self):
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None,
                                                                   microsecond=0)
        host = 'ahead-in-%s' % type(self).__name__   # warned once per process
        ahead = sample(host, 0, ['u1'])
        ahead['sampled_at'] = (now + datetime.timedelta(seconds=120)).isoformat()
        ahead['instances'][0].update(
            prev_updated_at=(now + datetime.timedelta(seconds=60)).isoformat(),
            prev_block_dev_iops=0, block_dev_iops=600)
        on_time = sample('h2', 0)
        on_time['sampled_at'] = (now + datetime.timedelta(seconds=30)).isoformat()
        with self.assertLogs('nova_drs.stats.ingest', 'WARNING') as logs:
            ingest.insert_samples(self.db, [ahead, on_time])
            ingest.insert_samples(self.db, [dict(ahead, sampled_at=(
                now + datetime.timedelta(seconds=180)).isoformat())])
        self.assertEqual(1, len(logs.output))     # one warning per host
        self.assertIn(host, logs.output[0])
        taken = [row['sampled_at'] for row in db_statistics.latest(self.db, host, 5)]
        self.assertTrue(taken)
        self.assertTrue(all(when <= now + ingest.MAX_AHEAD for when in taken))
        # Within the bound, a compute's stamp is kept as it is.
        self.assertEqual(now + datetime.timedelta(seconds=30),
                         db_statistics.latest(self.db, 'h2')[0]['sampled_at'])
        # The I/O rate keeps the compute's own interval (60 s, 0 to 600 I/O).
        self.assertAlmostEqual(10.0, db_statistics.latest_instances(
            self.db, ['u1'], 2)['u1'][-1]['iops'], delta=0.5)

    def test_collector_stores_wake_address_once(self):
        samples = [sample('h1', 0, mac='52:54:00:00:00:01'),
                   sample('h1', 1, mac='52:54:00:00:00:01')]
        the_collector = collector.Collector(self.db)
        self.assertEqual((2, 0), the_collector.ingest(samples))
        from nova_drs.db import hosts
        self.assertEqual('52:54:00:00:00:01', hosts.get(self.db, 'h1')['mac_to_wake'])


class TestSqlite(StoreTests, unittest.TestCase):

    def setUp(self):
        directory = tempfile.mkdtemp(prefix='nova-drs-stats-')
        self.db = api.Database('sqlite:///' + os.path.join(directory, 'drs.sqlite'))
        migration.sync(self.db)
        self.addCleanup(self.db.dispose)


