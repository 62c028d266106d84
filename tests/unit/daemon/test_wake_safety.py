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

"""A woken host is active again only once nova-compute reports; a wake that
fails or never shows ends in error, marked so it is not suspended again.

Real host lifecycle and SQLite DRS database; nova and the power driver are
the stand-ins of fakes.py (fixtures: conftest.py). How a report is judged
against the daemon's clock: test_wake_confirmation.py.
"""

from oslo_utils import timeutils

from nova_drs import exception
from nova_drs.db import hosts as drs_hosts
from tests.unit.daemon.lifecycle_steps import host_lifecycle
from tests.unit.daemon.lifecycle_steps import in_state
from tests.unit.daemon.lifecycle_steps import step
from tests.unit.daemon.lifecycle_steps import WAKE_TIMEOUT


def waking(database, nova, host='h1'):
    in_state(database, host, drs_hosts.SUSPENDING, drs_hosts.SUSPENDED, drs_hosts.WAKING)
    nova.services[host].update(state='down')


def test_a_wake_command_that_fails_puts_the_host_in_error(drs_db, nova, power):
    waking(drs_db, nova)
    power.faults['wake'] = exception.PowerError('BMC did not answer')
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ERROR
    assert record['wake_failed']
    assert 'wake command failed: BMC did not answer' in record['state_reason']


def test_a_host_that_never_reports_ends_in_error_after_the_wake_timeout(drs_db, nova, power):
    waking(drs_db, nova)
    steps = host_lifecycle(nova, drs_db, power)
    step(steps)
    timeutils.advance_time_seconds(WAKE_TIMEOUT)
    assert step(steps)['suspend_state'] == drs_hosts.WAKING     # the wake is sent again
    assert power.sent('wake') == ['h1', 'h1']
    timeutils.advance_time_seconds(1)
    record = step(steps)
    assert (record['suspend_state'], record['wake_failed']) == (drs_hosts.ERROR, True)
    assert 'did not report up within 900s' in record['state_reason']
    assert nova.services['h1']['status'] == 'enabled'   # never disabled by the daemon


def test_a_wake_resent_that_fails_keeps_waiting(drs_db, nova, power):
    waking(drs_db, nova)
    steps = host_lifecycle(nova, drs_db, power)
    step(steps)
    power.faults['wake'] = exception.PowerError('BMC busy')
    assert step(steps)['suspend_state'] == drs_hosts.WAKING
    del power.faults['wake']
    nova.report('h1')
    assert step(steps)['suspend_state'] == drs_hosts.ACTIVE


def test_a_host_nova_has_no_service_for_is_not_taken_as_awake(drs_db, nova, power):
    waking(drs_db, nova)
    del nova.services['h1']
    steps = host_lifecycle(nova, drs_db, power)
    step(steps)
    power.power = 'on'
    assert step(steps)['suspend_state'] == drs_hosts.WAKING


def test_a_successor_without_a_power_status_does_not_confirm_the_wake(drs_db, nova, power):
    waking(drs_db, nova)
    step(host_lifecycle(nova, drs_db, power))
    nova.report('h1')                                 # up: but is it the woken host?
    power.faults['status'] = exception.PowerError('BMC did not answer')
    successor = host_lifecycle(nova, drs_db, power)
    assert step(successor)['suspend_state'] == drs_hosts.WAKING
    del power.faults['status']
    power.power = 'on'
    assert step(successor)['suspend_state'] == drs_hosts.ACTIVE


def test_a_second_wake_of_a_host_is_judged_on_its_own_heartbeat(drs_db, nova, power):
    waking(drs_db, nova)
    steps = host_lifecycle(nova, drs_db, power)
    step(steps)
    power.faults['wake'] = exception.PowerError('BMC busy')
    timeutils.advance_time_seconds(WAKE_TIMEOUT + 1)
    assert step(steps)['suspend_state'] == drs_hosts.ERROR
    # An admin wakes it again; nova showed it up before this wake.
    del power.faults['wake']
    nova.report('h1')
    drs_hosts.transition(drs_db, 'h1', drs_hosts.ERROR, drs_hosts.WAKING, 'admin')
    step(steps)
    assert step(steps)['suspend_state'] == drs_hosts.WAKING     # the same heartbeat
    timeutils.advance_time_seconds(10)
    nova.report('h1')
    assert step(steps)['suspend_state'] == drs_hosts.ACTIVE
