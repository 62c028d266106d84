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

"""A wake is confirmed by nova-compute reporting after the wake command,
judged on nova's stamps alone: the daemon's clock (here an hour off either
way) never decides it. Real lifecycle and SQLite DRS database; nova and the
power driver are stand-ins (tests/unit/daemon/fakes.py)."""

import datetime
import os
import shutil
import tempfile

from nova_drs.daemon import lifecycle
from nova_drs.db import api as db_api
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import migration
from tests.unit.daemon import fakes

NOVA_NOW = datetime.datetime(2026, 11, 25, 12, 0, 0)


class TestWakeConfirmation:

    def setup_method(self):
        self.directory = tempfile.mkdtemp(prefix='nova-drs-wake-')
        self.db = db_api.Database('sqlite:///' + os.path.join(self.directory, 'drs.sqlite'))
        migration.sync(self.db)
        drs_hosts.ensure(self.db, 'host1')
        drs_hosts.transition(self.db, 'host1', 'active', 'suspending', 'test')
        drs_hosts.set_fields_at(self.db, 'host1', 'suspending',
                                drs_hosts.get(self.db, 'host1')['state_version'],
                                disabled_by_drs=True)
        drs_hosts.transition(self.db, 'host1', 'suspending', 'suspended', 'test')
        drs_hosts.transition(self.db, 'host1', 'suspended', 'waking', 'test')
        self.nova, self.power = fakes.FakeNova(), fakes.FakePower(power='off')
        # One nova-compute service whose heartbeat and state the test sets.
        self.nova.add_service('host1', status='disabled', state='down', updated_at=NOVA_NOW)

    def teardown_method(self):
        self.db.dispose()
        shutil.rmtree(self.directory)

    def lifecycle(self, clock_offset):
        return lifecycle.HostLifecycle(
            self.nova, self.db, self.power, suspend_timeout=300, wake_timeout=900,
            migration_timeout=300,
            clock=lambda: NOVA_NOW + datetime.timedelta(seconds=clock_offset))

    def report(self, seconds_later):
        """nova-compute reports up, stamped by nova's clock."""
        self.nova.report('host1', at=NOVA_NOW + datetime.timedelta(seconds=seconds_later))

    def advance(self, daemon):
        daemon.advance(drs_hosts.get(self.db, 'host1'))
        return drs_hosts.get(self.db, 'host1')['suspend_state']

    def test_a_report_after_the_wake_confirms_it_whatever_the_daemons_clock(self):
        daemon = self.lifecycle(clock_offset=3600)    # the daemon runs an hour ahead
        assert self.advance(daemon) == 'waking'       # the wake command leaves
        assert self.power.calls == [('wake', 'host1')]
        self.report(seconds_later=10)            # nova-compute back, on nova's clock
        assert self.advance(daemon) == 'active'
        assert self.nova.called('enable_service') == [('svc-host1',)]

    def test_the_heartbeat_seen_at_the_wake_does_not_confirm_it(self):
        # nova still shows the host up from before it slept (suspended within
        # service_down_time); the daemon's clock is an hour behind nova's.
        self.report(seconds_later=0)
        daemon = self.lifecycle(clock_offset=-3600)
        assert self.advance(daemon) == 'waking'
        assert self.advance(daemon) == 'waking'        # the same heartbeat: not yet
        self.report(seconds_later=10)
        assert self.advance(daemon) == 'active'

    def test_a_daemon_that_did_not_send_the_wake_asks_the_power_driver(self):
        self.lifecycle(clock_offset=0).advance(drs_hosts.get(self.db, 'host1'))
        self.report(seconds_later=0)                # up, but is the host on?
        successor = self.lifecycle(clock_offset=-3600)
        assert self.advance(successor) == 'waking'       # the power driver says off
        self.power.power = 'on'
        assert self.advance(successor) == 'active'
