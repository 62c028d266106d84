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
power driver are stand-ins."""

import datetime
import os
import shutil
import tempfile

from nova_drs.daemon import lifecycle
from nova_drs.db import api as db_api
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import migration

NOVA_NOW = datetime.datetime(2026, 11, 25, 12, 0, 0)


def _stamp(when):
    return when.isoformat()


class FakeNova:
    """One nova-compute service whose heartbeat and state the test sets."""

    def __init__(self):
        self.service = {'id': 7, 'host': 'host1', 'status': 'disabled', 'state': 'down',
                        'updated_at': _stamp(NOVA_NOW)}
        self.enabled = 0

    def compute_service(self, host):
        return dict(self.service)

    def enable_service(self, service_id):
        self.enabled += 1
        self.service['status'] = 'enabled'

    def report(self, seconds_later, state='up'):
        self.service.update(state=state, updated_at=_stamp(
            NOVA_NOW + datetime.timedelta(seconds=seconds_later)))


class FakePower:
    def __init__(self):
        self.calls = []
        self.power = 'off'

    def __call__(self, record):
        return self, record['host']

    def wake(self, target):
        self.calls.append('wake')

    def status(self, target):
        return self.power


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
        self.nova, self.power = FakeNova(), FakePower()

    def teardown_method(self):
        self.db.dispose()
        shutil.rmtree(self.directory)

    def lifecycle(self, clock_offset):
        return lifecycle.HostLifecycle(
            self.nova, self.db, self.power, suspend_timeout=300, wake_timeout=900,
            migration_timeout=300,
            clock=lambda: NOVA_NOW + datetime.timedelta(seconds=clock_offset))

    def advance(self, daemon):
        daemon.advance(drs_hosts.get(self.db, 'host1'))
        return drs_hosts.get(self.db, 'host1')['suspend_state']

    def test_a_report_after_the_wake_confirms_it_whatever_the_daemons_clock(self):
        daemon = self.lifecycle(clock_offset=3600)    # the daemon runs an hour ahead
        assert self.advance(daemon) == 'waking'       # the wake command leaves
        assert self.power.calls == ['wake']
        self.nova.report(seconds_later=10)            # nova-compute back, on nova's clock
        assert self.advance(daemon) == 'active'
        assert self.nova.enabled == 1

    def test_the_heartbeat_seen_at_the_wake_does_not_confirm_it(self):
        # nova still shows the host up from before it slept (suspended within
        # service_down_time); the daemon's clock is an hour behind nova's.
        self.nova.report(seconds_later=0)
        daemon = self.lifecycle(clock_offset=-3600)
        assert self.advance(daemon) == 'waking'
        assert self.advance(daemon) == 'waking'        # the same heartbeat: not yet
        self.nova.report(seconds_later=10)
        assert self.advance(daemon) == 'active'

    def test_a_daemon_that_did_not_send_the_wake_asks_the_power_driver(self):
        self.lifecycle(clock_offset=0).advance(drs_hosts.get(self.db, 'host1'))
        self.nova.report(seconds_later=0)                # up, but is the host on?
        successor = self.lifecycle(clock_offset=-3600)
        assert self.advance(successor) == 'waking'       # the power driver says off
        self.power.power = 'on'
        assert self.advance(successor) == 'active'
