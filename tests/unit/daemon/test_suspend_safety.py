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

"""A host is powered off only once nova shows it empty, disabled and down.

Real host lifecycle and SQLite DRS database; nova and the power driver are
the stand-ins of tests/unit/daemon/fakes.py (fixtures: conftest.py), the
clock oslo's override.
"""

import pytest

from nova_drs import exception
from nova_drs.db import hosts as drs_hosts
from tests.unit.daemon import fakes
from tests.unit.daemon.lifecycle_steps import host_lifecycle
from tests.unit.daemon.lifecycle_steps import past
from tests.unit.daemon.lifecycle_steps import requests
from tests.unit.daemon.lifecycle_steps import START
from tests.unit.daemon.lifecycle_steps import started
from tests.unit.daemon.lifecycle_steps import step
from tests.unit.daemon.lifecycle_steps import SUSPEND_TIMEOUT
from tests.unit.daemon.lifecycle_steps import suspending


def test_the_service_is_disabled_and_flagged_before_any_server_leaves(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')
    record = step(host_lifecycle(nova, drs_db, power))
    assert [name for name, _ in nova.calls if name in ('disable_service', 'live_migrate')] \
        == ['disable_service', 'live_migrate']
    assert nova.services['h1']['status'] == 'disabled'
    assert nova.services['h1']['disabled_reason'] == 'nova-drs: suspending host'
    assert record['disabled_by_drs']


def test_a_host_with_a_server_left_is_not_suspended(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')
    nova.add_server('vm2', 'h1')
    steps = host_lifecycle(nova, drs_db, power)
    step(steps)
    assert sorted(nova.running) == ['vm1', 'vm2']
    nova.finish(['vm1'])
    for _ in range(3):
        record = step(steps)
    assert power.calls == []
    assert (record['suspend_state'], record['power_requested_at']) == (drs_hosts.SUSPENDING,
                                                                      None)
    nova.finish(['vm2'])
    record = step(steps)
    assert power.calls == [('suspend', 'h1')]
    assert record['power_requested_at'] == START
    # Both moves are settled as done once their server left.
    assert {r['status'] for r in requests(drs_db)} == {'done'}


def test_a_server_placement_lost_track_of_still_keeps_its_host_on(drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1', task='rebooting')   # busy: it waits, it is not moved
    nova.unallocated.add('vm1')          # nova lists it; placement holds nothing for it
    steps = host_lifecycle(nova, drs_db, power)
    for _ in range(3):
        record = step(steps)
    assert power.calls == [] and nova.requests == []
    assert (record['suspend_state'], record['power_requested_at']) == (drs_hosts.SUSPENDING,
                                                                      None)


def test_a_host_is_suspended_only_once_its_power_is_off(drs_db, nova, power):
    steps = started(nova, drs_db, power, servers=())  # empty: the suspend command leaves
    assert step(steps)['suspend_state'] == drs_hosts.SUSPENDING   # still on: sent again
    assert power.calls == [('suspend', 'h1'), ('status', 'h1'), ('suspend', 'h1')]
    power.power = 'off'
    assert step(steps)['suspend_state'] == drs_hosts.SUSPENDED


def test_a_host_nova_reports_down_is_suspended_without_asking_its_bmc(drs_db, nova, power):
    steps = started(nova, drs_db, power, servers=())
    nova.report('h1', state='down')
    assert step(steps)['suspend_state'] == drs_hosts.SUSPENDED
    assert power.calls == [('suspend', 'h1')]


def test_a_host_placement_still_holds_allocations_on_is_not_powered_off(drs_db, nova, power):
    suspending(drs_db)
    nova.extra_usages['h1'] = {'MEMORY_MB': 2048}
    steps = host_lifecycle(nova, drs_db, power)
    for _ in range(3):
        record = step(steps)
    assert power.calls == []
    assert record['power_requested_at'] is None
    nova.extra_usages.clear()
    assert step(steps)['power_requested_at'] is not None
    assert power.calls == [('suspend', 'h1')]


def test_the_placement_check_asks_about_the_hosts_own_nodes_only(drs_db, nova, power):
    """The compute nodes come from the cycle's observe (Advance.run): emptying a
    host costs one usage query per node of it, never a hypervisor listing, in a
    cloud of any size."""
    suspending(drs_db)
    steps = host_lifecycle(nova, drs_db, power)
    steps.compute_nodes = {'h1': ['rp-h1'], 'h2': ['rp-h2']}
    steps.advance(drs_hosts.get(drs_db, 'h1'))
    assert power.calls == [('suspend', 'h1')]
    assert not nova.called('hypervisors')
    assert nova.called('provider_usages') == [('rp-h1',)]


def test_a_host_with_no_compute_node_listed_is_not_powered_off(drs_db, nova, power):
    """No node of the host in this cycle's listing: not known empty, so it waits."""
    suspending(drs_db)
    steps = host_lifecycle(nova, drs_db, power)
    steps.compute_nodes = {'h2': ['rp-h2']}
    for _ in range(3):
        steps.advance(drs_hosts.get(drs_db, 'h1'))
    record = drs_hosts.get(drs_db, 'h1')
    assert (record['suspend_state'], record['power_requested_at']) == (
        drs_hosts.SUSPENDING, None)
    assert power.calls == []


def test_a_host_nova_knows_no_service_of_is_not_suspended(drs_db, nova, power):
    suspending(drs_db)
    del nova.services['h1']
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'nova knows no compute service on h1' in record['state_reason']
    assert power.calls == []


@pytest.mark.parametrize('unable', ['can_suspend', 'can_wake'])
def test_a_host_its_driver_could_not_power_back_is_never_emptied(drs_db, nova, unable):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')
    power = fakes.FakePower(**{unable: False})
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'no usable power driver' in record['state_reason']
    assert not nova.called('disable_service') and not nova.called('live_migrate')
    assert nova.services['h1']['status'] == 'enabled'


def test_a_host_without_a_power_driver_is_never_emptied(drs_db, nova):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')

    def no_driver(record):
        raise exception.PowerError('no power settings for h1')

    record = step(host_lifecycle(nova, drs_db, no_driver))
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert 'no power settings for h1' in record['state_reason']
    assert nova.servers['vm1']['OS-EXT-STS:task_state'] is None


@pytest.mark.parametrize('wake_fails', [False, True])
def test_a_server_that_lands_on_a_host_powering_off_wakes_it_into_error(
        drs_db, nova, power, wake_fails):
    steps = started(nova, drs_db, power, servers=())  # the suspend command left
    nova.add_server('vm1', 'h1')                  # an admin's forced move
    if wake_fails:
        power.faults['wake'] = exception.PowerError('BMC did not answer')
    power.power = 'off'
    record = step(steps)
    assert record['suspend_state'] == drs_hosts.ERROR
    assert 'servers appeared on h1' in record['state_reason']
    assert power.sent('wake') == ['h1']


def test_a_host_that_never_goes_down_ends_in_error_not_suspended(drs_db, nova, power):
    steps = started(nova, drs_db, power, servers=())
    record = past(steps, SUSPEND_TIMEOUT)
    assert record['suspend_state'] == drs_hosts.ERROR
    assert 'did not go down within 600s' in record['state_reason']


def test_a_suspend_abandoned_re_enables_the_host_and_closes_its_evacuations(
        drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')
    nova.add_server('vm2', 'h1', status='ERROR')
    record = step(host_lifecycle(nova, drs_db, power))
    assert record['suspend_state'] == drs_hosts.ACTIVE
    assert record['state_reason'] == \
        'suspend abandoned: server vm2 is ERROR and cannot be moved'
    assert not record['disabled_by_drs']
    assert nova.services['h1']['status'] == 'enabled'
    # vm1's move had started: its evacuation row is closed, not left open.
    assert [(r['instance_uuid'], r['status']) for r in requests(drs_db)] == [
        ('vm1', 'aborted')]
    assert power.calls == []


def test_an_admins_cancel_during_the_step_stops_it_and_re_enables_the_host(
        drs_db, nova, power):
    suspending(drs_db)
    nova.add_server('vm1', 'h1')

    def cancel_after_disable(point):
        if point == 'suspend:service-disabled':
            drs_hosts.transition(drs_db, 'h1', drs_hosts.SUSPENDING, drs_hosts.ACTIVE,
                                 'cancelled by an admin')

    record = step(host_lifecycle(nova, drs_db, power, crash_point=cancel_after_disable))
    assert not nova.called('live_migrate')
    assert nova.services['h1']['status'] == 'enabled'
    assert (record['suspend_state'], record['disabled_by_drs']) == (drs_hosts.ACTIVE, False)
    assert requests(drs_db) == []


def test_an_active_host_the_daemon_left_disabled_is_re_enabled(drs_db, nova, power):
    for host in ('h1', 'h2'):
        drs_hosts.ensure(drs_db, host)
        nova.services[host]['status'] = 'disabled'
    drs_hosts.set_fields(drs_db, 'h1', disabled_by_drs=True)
    steps = host_lifecycle(nova, drs_db, power)
    assert not step(steps, 'h1')['disabled_by_drs']
    step(steps, 'h2')
    # h2 was disabled by an admin, not by the daemon: it stays disabled.
    assert (nova.services['h1']['status'], nova.services['h2']['status']) == (
        'enabled', 'disabled')
    assert nova.called('enable_service') == [('svc-h1',)]
