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

"""Per-aggregate overcommit on real nova: filters, recorder, sync, report.

Computes use nova's SmallFakeDriver (2 vCPUs each) so the counts stay small.
Ratios are pushed into placement with ``overcommit sync`` (the function the
CLI runs) against the fixture's placement, as operators must: placement
drops hosts on its own allocation_ratio before any filter runs.
"""

import time

import fixtures
from nova import context as nova_context

from nova_drs import conf as drs_conf
from nova_drs.cmd import manage_overcommit
from nova_drs.db import overcommit as db_overcommit
from nova_drs.filters import overcommit_base
from nova_drs.overcommit import alerts
from nova_drs.overcommit import nova_view
from nova_drs.overcommit import recorder
from nova_drs.scheduling import request_view
from tests.functional import base
from tests.functional import daemon_support


class OvercommitTestBase(base.DrsFunctionalTestCase):
    COMPUTE_DRIVER = 'fake.SmallFakeDriver'
    EXTRA_FLAGS = {('quota', 'instances'): 100, ('quota', 'cores'): 200}

    def setUp(self):
        super().setUp()
        self.flavor_id = self.admin_api.post_flavor({'flavor': {
            'name': 'one-vcpu', 'ram': 64, 'vcpus': 1, 'disk': 1}})['id']
        self.ctxt = nova_context.get_admin_context()
        self.placement_adapter = daemon_support.nova_api_for(self).placement_adapter
        self.recorder = recorder.OvercommitRecorder(
            self.drs_db, nova_view.RatioLookup(drs_conf.CONF))
        self._fed = 0
        self._fresh_scheduler_state()

    def _fresh_scheduler_state(self):
        """The plugins' process-wide state as a new nova-scheduler has it.

        The recorded usage the filters read is reused across requests for
        [drs_scheduler] cache_seconds of wall time: its clock is frozen, so
        whether a request reads it again depends on the ratio change (and
        nothing else) however slowly the machine runs, and a previous test's
        usage, ratios or alerts are never seen.
        """
        def forget():
            request_view._ratios_seen.clear()
            request_view._usage.invalidate()
            request_view._views.invalidate()
            overcommit_base._exceeded._over.clear()
        forget()
        self.addCleanup(forget)
        self.useFixture(fixtures.MonkeyPatch(
            'nova_drs.scheduling.request_view._usage._clock', lambda: 0.0))

    def feed_notifications(self):
        """Hand the recorder every versioned notification nova emitted since last time."""
        emitted = list(self.notifier.versioned_notifications)
        for notification in emitted[self._fed:]:
            self.recorder.info(None, notification['publisher_id'],
                               notification['event_type'], notification['payload'], {})
        # what was handed over, not len() of the live list: nova may have
        # emitted more meanwhile, which the next call must hand over
        self._fed = len(emitted)

    def reset_notifications(self):
        self.notifier.reset()
        self._fed = 0

    def wait_until(self, condition, what, timeout=120):
        """Poll ``condition()`` until it returns something true; fail after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            result = condition()
            if result:
                return result
            if time.monotonic() > deadline:
                self.fail('timed out waiting for %s' % what)
            time.sleep(0.1)

    def aggregate(self, name, hosts, **metadata):
        agg_id = self.admin_api.post_aggregate({'aggregate': {'name': name}})['id']
        for host in hosts:
            self.admin_api.add_host_to_aggregate(agg_id, host)
        self.set_metadata(agg_id, **metadata)
        return agg_id

    def set_metadata(self, agg_id, **metadata):
        self.admin_api.post_aggregate_action(
            agg_id, {'set_metadata': {'metadata': metadata}})

    def sync(self, **kwargs):
        result, _text = manage_overcommit.run_sync(
            drs_conf.CONF, self.placement_adapter, self.drs_db, self.ctxt, **kwargs)
        return result

    def report(self):
        rows, text = manage_overcommit.run_report(drs_conf.CONF, self.drs_db, self.ctxt)
        return {(row.host, row.resource): row.capacity for row in rows}, text

    def placement_ratio(self, host, resource_class='VCPU'):
        rp_uuid = self._get_provider_uuid_by_host(host)
        inventories = self.placement.get(
            '/resource_providers/%s/inventories' % rp_uuid).body['inventories']
        return inventories[resource_class]['allocation_ratio']

    def boot(self):
        server = self._create_server(flavor_id=self.flavor_id, networks='none',
                                     expected_state=('ACTIVE', 'ERROR'))
        if server['status'] == 'ACTIVE':
            self._wait_for_create_end(server['id'])
        self.feed_notifications()
        return server

    def _wait_for_create_end(self, server_id):
        self.wait_for_notification('instance.create.end', server_id)

    def wait_for_notification(self, event_type, server_id):
        """nova emits create.end just after the server shows ACTIVE, delete.end
        after it is gone from the API: wait for the notification itself."""
        self.wait_until(lambda: any(
            n['event_type'] == event_type
            and n['payload'].get('nova_object.data', {}).get('uuid') == server_id
            for n in list(self.notifier.versioned_notifications)),
            '%s of %s' % (event_type, server_id))

    def _wait_for_state_change(self, server, expected_status, **kwargs):
        if isinstance(expected_status, tuple):
            def settled():
                found = self.api.get_server(server['id'])
                return found if found['status'] in expected_status else None
            return self.wait_until(settled, 'server %s in %s' % (server['id'],
                                                                   expected_status))
        return super()._wait_for_state_change(server, expected_status, **kwargs)

    def boot_until_full(self, limit=20):
        """Boot servers until one fails; returns {host: count} of the ACTIVE ones."""
        landed = {}
        for _ in range(limit):
            server = self.boot()
            if server['status'] == 'ERROR':
                self.assertIn('No valid host', server['fault']['message'])
                return landed
            host = self.server_host(server['id'])
            landed[host] = landed.get(host, 0) + 1
        self.fail('still accepting servers after %d' % limit)


class PerAggregateRatiosTest(OvercommitTestBase):
    COMPUTE_HOSTS = ('host1', 'host2')

    def test_each_aggregate_accepts_exactly_its_ratio(self):
        self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.aggregate('B', ['host2'], cpu_allocation_ratio='4.0')
        result = self.sync()
        self.assertEqual({('host1', 'VCPU', 4.0, 1.0)},
                         {(c.host, c.resource_class, c.old, c.new) for c in result.changes})
        self.assertEqual(1.0, self.placement_ratio('host1'))
        self.assertEqual(4.0, self.placement_ratio('host2'))

        self.assertEqual({'host1': 2, 'host2': 8}, self.boot_until_full())

    def test_smallest_ratio_wins_and_invalid_metadata_falls_back(self):
        self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.aggregate('A-wide', ['host1', 'host2'], cpu_allocation_ratio='2.0')
        self.aggregate('bad', ['host2'], cpu_allocation_ratio='abc')
        self.sync()
        self.assertEqual(1.0, self.placement_ratio('host1'))
        self.assertEqual(2.0, self.placement_ratio('host2'))
        self.assertEqual({'host1': 2, 'host2': 4}, self.boot_until_full())
        warnings = [line for line in self.stdlog.logger.output.splitlines()
                    if "cpu_allocation_ratio='abc'" in line]
        self.assertEqual(1, len(warnings), warnings)

    def test_sync_reaches_hosts_added_later_and_dry_run_writes_nothing(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='2.0',
                                ram_allocation_ratio='1.5')
        self.sync()
        self.assertEqual(2.0, self.placement_ratio('host1'))
        self.assertEqual(1.5, self.placement_ratio('host1', 'MEMORY_MB'))
        self.assertEqual(4.0, self.placement_ratio('host2'))

        self.admin_api.add_host_to_aggregate(agg_id, 'host2')
        dry = self.sync(dry_run=True)
        self.assertEqual({('host2', 'VCPU', 2.0), ('host2', 'MEMORY_MB', 1.5)},
                         {(c.host, c.resource_class, c.new) for c in dry.changes})
        self.assertEqual(4.0, self.placement_ratio('host2'))

        self.assertEqual(2, len(self.sync(aggregate='A').changes))
        self.assertEqual(2.0, self.placement_ratio('host2'))
        self.assertEqual(1.5, self.placement_ratio('host2', 'MEMORY_MB'))
        self.assertEqual([], self.sync().changes)  # only writes changes

    def test_sync_detects_a_compute_that_overwrites_the_ratio(self):
        self.aggregate('A', ['host1'], cpu_allocation_ratio='2.0')
        self.sync()
        # host1's nova.conf sets cpu_allocation_ratio: nova-compute writes it back
        self.flags(cpu_allocation_ratio=8.0)
        self.computes['host1'].manager.update_available_resource(self.ctxt)
        self.assertEqual(8.0, self.placement_ratio('host1'))
        result = self.sync()
        self.assertEqual(1, len(result.warnings), result.warnings)
        self.assertIn('host1', result.warnings[0])
        self.assertIn('cpu_allocation_ratio is set in its nova.conf', result.warnings[0])

    def test_a_stale_inventory_is_read_again_and_written(self):
        # The daemon hands the sync the inventories it read this cycle; a
        # write since moved the provider generation: placement answers 409
        # and the sync reads the inventories again before writing.
        from nova_drs.overcommit import placement_sync
        provider = self._get_provider_uuid_by_host('host1')
        stale = placement_sync._inventories(self.placement_adapter, provider)
        placement_sync._set_ratio(self.placement_adapter, provider, 'MEMORY_MB', 1.5)
        placement_sync._set_ratio(self.placement_adapter, provider, 'VCPU', 3.0, stale)
        self.assertEqual(3.0, self.placement_ratio('host1'))
        self.assertEqual(1.5, self.placement_ratio('host1', 'MEMORY_MB'))
        fresh = placement_sync._inventories(self.placement_adapter, provider)
        self.assertEqual(stale['resource_provider_generation'] + 2,
                         fresh['resource_provider_generation'])
        self.assertEqual(stale['inventories']['VCPU']['total'],
                         fresh['inventories']['VCPU']['total'])


class RatioChangeTest(OvercommitTestBase):
    COMPUTE_HOSTS = ('host1',)

    def test_raise_then_lower_ratio(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.sync()
        self.assertEqual('ACTIVE', self.boot()['status'])

        # 1.0 -> 2.0: total 4, the old server counts 1 / 1 * 2 = 2, so exactly
        # 2 more fit (a naive physical * ratio would let 3 in)
        self.set_metadata(agg_id, cpu_allocation_ratio='2.0')
        self.sync()
        self.assertEqual({'host1': 2}, self.boot_until_full())
        capacity, _text = self.report()
        cpu = capacity[('host1', 'vcpus')]
        self.assertEqual((4.0, 4.0, 100.0), (cpu.total, cpu.used, cpu.percent))
        recorded = sorted(row['cpu_allocation_ratio'] for row in (
            db_overcommit.get(self.drs_db, server['id']) for server in self.api.get_servers())
            if row)
        self.assertEqual([1.0, 2.0, 2.0], recorded)

        # 2.0 -> 1.0: 3 vCPUs on a 2-vCPU total: 150 %, nothing more fits, alert
        self.reset_notifications()
        self.set_metadata(agg_id, cpu_allocation_ratio='1.0')
        server = self.boot()
        self.assertEqual('ERROR', server['status'])
        exceeded = [n for n in self.notifier.notifications
                    if n.event_type == alerts.EVENT_TYPE]
        self.assertEqual(1, len(exceeded))
        self.assertEqual(('host1', 'vcpus', 150.0),
                         tuple(exceeded[0].payload[k] for k in ('host', 'resource', 'percent')))
        self.assertIn('uses 150.0% of its vcpus capacity', self.stdlog.logger.output)

        self.sync()
        self.assertEqual(1.0, self.placement_ratio('host1'))
        capacity, text = self.report()
        cpu = capacity[('host1', 'vcpus')]
        self.assertEqual((2.0, 3.0, -1.0, 150.0), (cpu.total, cpu.used, cpu.free, cpu.percent))
        self.assertIn('150.0% OVER', text)

    def test_create_end_handled_after_the_raise_keeps_the_old_ratio(self):
        # The daemon handles instance.create.end late or twice (at-least-once
        # delivery) after the ratio was raised: the instance stays recorded
        # with the ratio it landed with, else one server too many fits.
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.sync()
        server = self.boot()
        self.set_metadata(agg_id, cpu_allocation_ratio='2.0')
        self.sync()
        create_end = [n for n in self.notifier.versioned_notifications
                      if n['event_type'] == 'instance.create.end']
        self.recorder.info(None, create_end[0]['publisher_id'], 'instance.create.end',
                           create_end[0]['payload'], {})
        self.assertEqual(1.0, db_overcommit.get(self.drs_db, server['id'])
                         ['cpu_allocation_ratio'])
        self.assertEqual({'host1': 2}, self.boot_until_full())


class RecorderTest(OvercommitTestBase):
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'
    COMPUTE_HOSTS = ('host1', 'host2')

    def test_recorder_follows_the_instance(self):
        self.aggregate('A', ['host1'], cpu_allocation_ratio='2.0', ram_allocation_ratio='1.5')
        self.aggregate('B', ['host2'], cpu_allocation_ratio='3.0')
        server = self._create_server(flavor_id=self.flavor_id, networks='none', host='host1')
        self._wait_for_create_end(server['id'])
        self.feed_notifications()
        row = db_overcommit.get(self.drs_db, server['id'])
        self.assertEqual(('host1', 1, 64, 2.0, 1.5, 'instance.create.end'),
                         (row['host'], row['vcpus'], row['memory_mb'],
                          row['cpu_allocation_ratio'], row['ram_allocation_ratio'],
                          row['recorded_by']))

        self._live_migrate(server, host='host2')
        self.wait_for_notification('instance.live_migration_post_dest.end', server['id'])
        self.feed_notifications()
        row = db_overcommit.get(self.drs_db, server['id'])
        self.assertEqual(('host2', 3.0), (row['host'], row['cpu_allocation_ratio']))
        # host2 has no RAM ratio metadata: its own (nova's initial 1.0)
        self.assertEqual(1.0, row['ram_allocation_ratio'])

        self._migrate_server(server, host='host1')
        self._confirm_resize(server)
        self.wait_for_notification('instance.resize_finish.end', server['id'])
        self.feed_notifications()
        row = db_overcommit.get(self.drs_db, server['id'])
        self.assertEqual(('host1', 2.0, 'instance.resize_finish.end'),
                         (row['host'], row['cpu_allocation_ratio'], row['recorded_by']))

        self._delete_server(server)
        self.wait_for_notification('instance.delete.end', server['id'])
        self.feed_notifications()
        self.assertIsNone(db_overcommit.get(self.drs_db, server['id']))

    def test_sync_records_instances_never_seen(self):
        self.aggregate('A', ['host1', 'host2'], cpu_allocation_ratio='2.0')
        servers = [self._create_server(flavor_id=self.flavor_id, networks='none')
                   for _ in range(2)]
        self.assertIsNone(db_overcommit.get(self.drs_db, servers[0]['id']))
        _result, text = manage_overcommit.run_sync(
            drs_conf.CONF, self.placement_adapter, self.drs_db, self.ctxt)
        self.assertIn('2 instances recorded', text)
        self.assertEqual([2.0, 2.0],
                         [db_overcommit.get(self.drs_db, s['id'])['cpu_allocation_ratio']
                          for s in servers])
        self.assertEqual('sync', db_overcommit.get(self.drs_db, servers[0]['id'])['recorded_by'])
