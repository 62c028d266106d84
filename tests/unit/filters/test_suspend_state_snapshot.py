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

"""SuspendStateFilter's fail-safe when the DRS database goes away (real SQLite)."""

import logging
import os
import tempfile
import unittest

from oslo_config import cfg

from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api
from nova_drs.db import hosts
from nova_drs.db import migration
from nova_drs.filters import suspend_state

UNREACHABLE = 'sqlite:////dev/null/unreachable/nova_drs.sqlite'


class Clock:
    now = 1000.0

    def __call__(self):
        return self.now


class HostStateSnapshotTest(unittest.TestCase):

    def setUp(self):
        self.conf = cfg.ConfigOpts()
        drs_conf.register_opts(self.conf)
        self.conf([])
        path = os.path.join(tempfile.mkdtemp(), 'drs.sqlite')
        self.conf.set_override('connection', 'sqlite:///' + path, group='drs_database')
        self.conf.set_override('state_cache_ttl', 60, group='drs_scheduler')
        database = db_api.Database.from_conf(self.conf)
        migration.sync(database)
        hosts.ensure(database, 'h1')
        hosts.ensure(database, 'h2')
        hosts.transition(database, 'h2', hosts.ACTIVE, hosts.SUSPENDING, 'test')
        self.clock = Clock()
        self.snapshot = suspend_state.HostStateSnapshot(self.conf, clock=self.clock)

    def _break_database(self):
        self.conf.set_override('connection', UNREACHABLE, group='drs_database')

    def test_reads_non_active_hosts_in_one_go(self):
        self.assertEqual({'h2': 'suspending'}, self.snapshot.read())

    def test_outage_keeps_last_states_within_ttl_with_one_warning(self):
        self.snapshot.read()
        self._break_database()
        with self.assertLogs(suspend_state.LOG.logger, logging.WARNING) as logs:
            for _ in range(5):
                self.clock.now += 10
                self.assertEqual('suspending', self.snapshot.read()['h2'])
        self.assertEqual(1, len(logs.records))
        self.assertIn('cannot read the DRS database', logs.output[0])

    def test_outage_beyond_ttl_relies_on_disabled_services(self):
        self.snapshot.read()
        self._break_database()
        self.clock.now += 61
        with self.assertLogs(suspend_state.LOG.logger, logging.WARNING) as logs:
            self.assertEqual({}, self.snapshot.read())
        self.assertIn('disabled nova-compute services', logs.output[0])

    def test_outage_before_any_read_never_raises(self):
        self._break_database()
        with self.assertLogs(suspend_state.LOG.logger, logging.WARNING):
            self.assertEqual({}, self.snapshot.read())

    def test_recovery_reads_fresh_states(self):
        self.snapshot.read()
        good = self.conf.drs_database.connection
        self._break_database()
        with self.assertLogs(suspend_state.LOG.logger, logging.WARNING):
            self.snapshot.read()
        self.conf.set_override('connection', good, group='drs_database')
        with self.assertLogs(suspend_state.LOG.logger, logging.INFO) as logs:
            self.assertEqual('suspending', self.snapshot.read()['h2'])
        self.assertIn('readable again', logs.output[0])


class SuspendStateFilterPasses(unittest.TestCase):

    class HostState:
        def __init__(self, host):
            self.host = host

    def test_only_active_and_unknown_hosts_pass(self):
        states = {'a': 'active', 'b': 'suspending', 'c': 'suspended', 'd': 'waking',
                  'e': 'error'}
        passing = [host for host in ('a', 'b', 'c', 'd', 'e', 'never-seen')
                   if suspend_state.SuspendStateFilter._passes(self.HostState(host), states)]
        self.assertEqual(['a', 'never-seen'], passing)
