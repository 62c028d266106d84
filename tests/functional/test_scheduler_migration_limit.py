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

"""MigrationLimitFilter on real nova: a move nova places (no host named, as
nova-loadbalancer's evacuations) skips a host already receiving
``[loadbalancer] max_migrations_per_destination`` migrations; a boot is
never refused."""

import threading
from unittest import mock

from tests.functional import base


class MigrationLimitFilterTest(base.DrsFunctionalTestCase):
    # FakeLiveMigrateDriver (the base's); the limit at 1 so one arrival fills
    # host2. The computes of this process share one live-migration pool: room
    # for the held migration and the one the test places.
    EXTRA_FLAGS = {('loadbalancer', 'max_migrations_per_destination'): 1,
                   ('DEFAULT', 'max_concurrent_live_migrations'): 2}

    def hold_live_migrations_from(self, host):
        """Live migrations leaving ``host`` stay ``running`` until the returned
        event is set; then they are rolled back (``cancelled``), as an abort."""
        release = threading.Event()

        def held(context, instance, dest, post_method, recover_method,
                 block_migration=False, migrate_data=None):
            release.wait(120)
            recover_method(context, instance, dest, migrate_data,
                           migration_status='cancelled')
        patcher = mock.patch.object(self.computes[host].manager.driver, 'live_migration',
                                    held)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(release.set)
        return release

    def boot_on(self, host, name):
        server = self._create_server(name=name, host=host, networks='none')
        self.assertEqual(host, self.server_host(server['id']))
        return server

    def test_a_move_without_a_host_skips_a_host_at_the_limit_a_boot_does_not(self):
        held = self.boot_on('host1', 'held')
        # host1 is the fuller of the two hosts the mover can go to: nova's own
        # weighers (spreading) and MigrationWeigher (one migration each) send
        # it to host2 without the filter.
        self.boot_on('host1', 'filler1')
        self.boot_on('host1', 'filler2')
        mover = self.boot_on('host3', 'mover')
        release = self.hold_live_migrations_from('host1')
        self.api.post_server_action(held['id'], {'os-migrateLive': {
            'host': 'host2', 'block_migration': 'auto'}})
        self.wait_for_migration_status(held, ['running'])  # arriving on host2

        self.api.post_server_action(mover['id'], {'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}})
        migration = self.complete_live_migration(mover)
        self.assertEqual('host1', migration['dest_compute'])
        self._wait_for_server_parameter(
            mover, {'OS-EXT-SRV-ATTR:host': 'host1', 'status': 'ACTIVE'})

        # host2 still receives one migration: a boot there is not refused
        booted = self.boot_on('host2', 'booted')
        self.assertEqual('ACTIVE', self.admin_api.get_server(booted['id'])['status'])

        release.set()
        self.wait_for_migration_status(held, ['cancelled'])
        self._wait_for_server_parameter(
            held, {'OS-EXT-SRV-ATTR:host': 'host1', 'status': 'ACTIVE'})
