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

"""MigrationLimitFilter's decision on nova RequestSpecs and HostStates."""

import unittest
from unittest import mock

from nova import context as nova_context
from nova import objects
from nova.scheduler import filters as nova_filters
from nova.scheduler import host_manager
from oslo_config import fixture as config_fixture

from nova_drs import conf as drs_conf
from nova_drs import filters as drs_filters
from nova_drs.filters import migration_limit
from nova_drs.scheduling import migrations as nova_migrations

objects.register_all()

MOVING = 'a1a1a1a1-0000-4000-8000-000000000001'
OTHER = ['b2b2b2b2-0000-4000-8000-00000000000%d' % k for k in range(1, 6)]
LOGGER = 'nova_drs.filters.migration_limit'


def record(instance, source, dest):
    return nova_migrations.Record(instance, source, dest)


def hosts(*names):
    return [host_manager.HostState(name, name, 'cell1') for name in names]


def live_migration(source='src'):
    """What conductor/tasks/live_migrate.py hands the scheduler."""
    return objects.RequestSpec(
        instance_uuid=MOVING, ignore_hosts=[source],
        requested_destination=objects.Destination(cell=objects.CellMapping(uuid=OTHER[4])))


def boot(host=None):
    spec = objects.RequestSpec(instance_uuid=MOVING, ignore_hosts=None)
    if host:
        spec.requested_destination = objects.Destination(host=host)
    return spec


class MigrationLimitFilterTest(unittest.TestCase):

    def setUp(self):
        fixture = config_fixture.Config(drs_conf.CONF)
        fixture.setUp()
        self.addCleanup(fixture.cleanUp)
        fixture.config(max_migrations_per_destination=2, group='loadbalancer')
        self.conf = fixture
        self.records = []
        patcher = mock.patch.object(nova_migrations, 'in_progress',
                                    side_effect=lambda: list(self.records))
        self.in_progress = patcher.start()
        self.addCleanup(patcher.stop)
        self.filter = migration_limit.MigrationLimitFilter()

    def passing(self, spec, *names):
        return [h.host for h in self.filter.filter_all(hosts(*names), spec)]

    def test_a_move_skips_hosts_at_the_limit_and_keeps_those_below(self):
        self.records = [record(MOVING, 'src', None),
                        record(OTHER[0], 'x', 'full'), record(OTHER[1], 'y', 'full'),
                        record(OTHER[2], 'x', 'one'),
                        record(OTHER[3], 'quiet', 'y')]   # leaving 'quiet': no arrival
        with self.assertLogs(LOGGER, 'DEBUG') as logs:
            self.assertEqual(['one', 'quiet', 'none'],
                             self.passing(live_migration(), 'full', 'one', 'quiet', 'none'))
        self.assertIn('full: 2 migrations already arriving, [loadbalancer] '
                      'max_migrations_per_destination is 2: excluded', logs.output[0])
        self.assertEqual(1, self.in_progress.call_count)    # one listing per request

        self.conf.config(max_migrations_per_destination=1, group='loadbalancer')
        self.assertEqual(['quiet', 'none'],
                         self.passing(live_migration(), 'full', 'one', 'quiet', 'none'))

    def test_the_request_s_own_migration_is_not_an_arrival(self):
        # a move to a named host: nova's record names it before scheduling
        self.records = [record(MOVING, 'src', 'target'), record(OTHER[0], 'x', 'target')]
        self.assertEqual(['target'], self.passing(live_migration(), 'target'))

    def test_a_boot_is_never_refused_nor_costs_a_query(self):
        self.records = [record(OTHER[0], 'x', 'full'), record(OTHER[1], 'y', 'full'),
                        record(OTHER[2], 'z', 'full')]
        self.assertEqual(['full'], self.passing(boot(), 'full'))
        self.assertEqual(['full'], self.passing(boot(host='full'), 'full'))
        self.in_progress.assert_not_called()

    def test_an_unshelve_has_no_migration_of_its_own_and_is_not_refused(self):
        self.records = [record(OTHER[0], 'x', 'full'), record(OTHER[1], 'y', 'full')]
        unshelve = objects.RequestSpec(
            instance_uuid=MOVING,
            requested_destination=objects.Destination(cell=objects.CellMapping(uuid=OTHER[4])))
        self.assertEqual(['full'], self.passing(unshelve, 'full'))

    def test_a_resize_allowed_on_its_own_host_is_a_move(self):
        # compute/api.py leaves ignore_hosts empty; the conductor names the cell
        self.records = [record(MOVING, 'full', None),
                        record(OTHER[0], 'x', 'full'), record(OTHER[1], 'y', 'full')]
        resize = objects.RequestSpec(
            instance_uuid=MOVING, ignore_hosts=[],
            requested_destination=objects.Destination(cell=objects.CellMapping(uuid=OTHER[4])))
        self.assertEqual(['other'], self.passing(resize, 'full', 'other'))

    def test_a_listing_failure_passes_every_host_with_one_warning(self):
        self.in_progress.side_effect = RuntimeError('cell database down')
        with self.assertLogs(LOGGER, 'WARNING') as logs:
            spec = live_migration()
            self.assertEqual(['a', 'b', 'c'], self.passing(spec, 'a', 'b', 'c'))
            self.assertTrue(all(self.filter.host_passes(h, spec) for h in hosts('a', 'b')))
        self.assertEqual(1, len(logs.output), logs.output)
        self.assertIn('cannot list migrations (cell database down): passing every host',
                      logs.output[0])

    def test_a_new_request_reads_again(self):
        self.records = [record(MOVING, 'src', None), record(OTHER[0], 'x', 'h')]
        self.conf.config(max_migrations_per_destination=1, group='loadbalancer')
        self.assertEqual([], self.passing(live_migration(), 'h'))
        self.records = [record(MOVING, 'src', None)]
        self.assertEqual(['h'], self.passing(live_migration(), 'h'))
        self.assertEqual(2, self.in_progress.call_count)

    def test_a_rebuild_is_not_filtered(self):
        self.records = [record(MOVING, 'h', None), record(OTHER[0], 'x', 'h')]
        self.conf.config(max_migrations_per_destination=1, group='loadbalancer')
        spec = live_migration()
        spec.scheduler_hints = {'_nova_check_type': ['rebuild']}
        self.assertEqual(['h'], self.passing(spec, 'h'))

    def test_shipped_in_all_filters(self):
        self.assertIn(migration_limit.MigrationLimitFilter, drs_filters.all_filters())
        self.assertTrue(issubclass(migration_limit.MigrationLimitFilter,
                                   nova_filters.BaseHostFilter))


class InProgressTest(unittest.TestCase):
    """One query per cell; a cell that fails is left out; arrivals count dest only."""

    def test_cells_are_read_once_and_a_failed_cell_is_skipped(self):
        migration = objects.Migration(instance_uuid=MOVING, source_compute='a',
                                      dest_compute='b')
        answers = {'cell1': [migration], 'cell2': RuntimeError('down'),
                   'cell3': nova_context.did_not_respond_sentinel}
        with mock.patch.object(nova_context, 'scatter_gather_skip_cell0',
                               return_value=answers) as gather, \
                mock.patch.object(nova_context, 'get_admin_context'), \
                self.assertLogs('nova_drs.scheduling.migrations', 'WARNING') as logs:
            records = nova_migrations.in_progress()
        self.assertEqual([record(MOVING, 'a', 'b')], records)
        self.assertEqual({'status': list(nova_migrations.IN_PROGRESS)},
                         gather.call_args.args[2])
        self.assertEqual(2, len(logs.output))

    def test_per_host_and_arrivals(self):
        records = [record(MOVING, 'a', 'b'), record(OTHER[0], 'b', 'c'),
                   record(OTHER[1], 'a', None), record(OTHER[2], 'c', 'c')]
        self.assertEqual({'a': 2, 'b': 2, 'c': 2}, nova_migrations.per_host(records))
        self.assertEqual({'b': 1, 'c': 2}, nova_migrations.arrivals(records))
        self.assertEqual({'c': 2}, nova_migrations.arrivals(records, exclude_instance=MOVING))
