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

"""Latency of ``GET /loadbalancer`` with many compute hosts, in-process.

    .venv/bin/python benchmarks/api_latency.py [--hosts 500] [--requests 200] [--freeze-gc]

Boots nova's in-process cloud (the functional-test harness: real nova-api
loaded from etc/nova-drs/api-paste.ini, cell databases in SQLite), adds
compute nodes until there are --hosts of them, gives each a drs_hosts row
and 12 statistics samples, then times --requests admin calls of
GET /v2.1/loadbalancer end to end (HTTP client, paste pipeline, nova cell
queries, DRS database). Prints p50/p90/p99/max in milliseconds; the target
is p99 < 100 ms.

The process holds nova's whole test cloud, so a full garbage collection
(~200-300 ms here) lands in the tail; --freeze-gc moves the start-up heap
out of the collector (gc.freeze(), as a forking WSGI server does after
loading the app) to show the request path's own tail.
"""

import argparse
import datetime
import gc
import os
import statistics
import sys
import time
import unittest

# The harness lives in tests/functional: make the repo root importable.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nova import context as nova_context  # noqa: E402
from nova import objects  # noqa: E402

from nova_drs.db import hosts as db_hosts  # noqa: E402
from nova_drs.db import models  # noqa: E402
from tests.functional import base  # noqa: E402

SKIPPED_FIELDS = {'id', 'uuid', 'host', 'hypervisor_hostname', 'created_at', 'updated_at',
                  'deleted', 'deleted_at', 'service_id'}
OPTIONS = argparse.Namespace(hosts=500, requests=200, freeze_gc=False)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class ApiLatency(base.DrsFunctionalTestCase):
    COMPUTE_HOSTS = ('bench-00000',)

    def _add_compute_nodes(self, count):
        cell = self.cell_mappings['cell1']
        admin = nova_context.get_admin_context()
        with nova_context.target_cell(admin, cell) as cell_context:
            template = objects.ComputeNodeList.get_all(cell_context)[0]
            fields = {name: getattr(template, name) for name in template.fields
                      if name not in SKIPPED_FIELDS and template.obj_attr_is_set(name)}
            for index in range(1, count):
                name = 'bench-%05d' % index
                objects.ComputeNode(context=cell_context, host=name,
                                    hypervisor_hostname=name, **fields).create()

    def _add_drs_rows(self, hosts):
        now = datetime.datetime(2026, 11, 22, 12, 0, 0)
        for host in hosts:
            db_hosts.ensure(self.drs_db, host, host)
        with self.drs_db.writer() as session:
            for host in hosts:
                for minute in range(12):
                    session.add(models.ComputeNodeStats(
                        host=host, hypervisor_hostname=host, memory_total=262144,
                        memory_used=1024 * minute, cpu_used_percent=5.0 * minute, vcpus=32,
                        deleted=0, sampled_at=now + datetime.timedelta(minutes=minute)))

    def test_latency(self):
        self._add_compute_nodes(OPTIONS.hosts)
        hosts = ['bench-%05d' % index for index in range(OPTIONS.hosts)]
        self._add_drs_rows(hosts)
        first = self.admin_api.api_get('/loadbalancer').body['hosts']
        self.assertEqual(OPTIONS.hosts, len(first))
        if OPTIONS.freeze_gc:
            gc.collect()
            gc.freeze()
            self.addCleanup(gc.unfreeze)
        timings = []
        for _ in range(OPTIONS.requests):
            start = time.perf_counter()
            response = self.admin_api.api_get('/loadbalancer')
            timings.append((time.perf_counter() - start) * 1000.0)
            self.assertEqual(OPTIONS.hosts, len(response.body['hosts']))
        print('\nGET /loadbalancer, %d hosts, %d requests (in-process, SQLite%s):'
              % (OPTIONS.hosts, OPTIONS.requests, ', gc frozen' if OPTIONS.freeze_gc else ''))
        print('  p50 %.1f ms  p90 %.1f ms  p99 %.1f ms  max %.1f ms  mean %.1f ms'
              % (percentile(timings, 0.50), percentile(timings, 0.90),
                 percentile(timings, 0.99), max(timings), statistics.mean(timings)))
        print('  target p99 < 100 ms: %s' % ('met' if percentile(timings, 0.99) < 100
                                             else 'NOT met'))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hosts', type=int, default=500)
    parser.add_argument('--requests', type=int, default=200)
    parser.add_argument('--freeze-gc', action='store_true',
                        help='gc.freeze() the start-up heap before timing')
    parser.parse_args(namespace=OPTIONS)
    result = unittest.TextTestRunner(verbosity=0).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(ApiLatency))
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
