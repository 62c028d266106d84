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

"""The one ``--wait`` poller of both CLIs (nova_drs.client.wait)."""

import pytest

from nova_drs import client


class Refused(Exception):
    pass


def _poll(states, timeout=60):
    seen = iter(states)
    lines = []
    item = client.wait(lambda: {'state': next(seen)}, lambda i: i['state'],
                       ('suspended', 'error'), lambda i: 'h1: %s' % i['state'],
                       'h1 to become suspended', timeout, 0, lines.append, Refused)
    return item, lines


def test_reports_each_change_once_and_returns_the_final_item():
    item, lines = _poll(['active', 'suspending', 'suspending', 'suspended'])
    assert item == {'state': 'suspended'}
    assert lines == ['h1: active', 'h1: suspending', 'h1: suspended']


def test_any_end_state_stops_the_wait():
    item, _ = _poll(['suspending', 'error', 'active'])
    assert item['state'] == 'error'


def test_past_the_timeout_the_given_error_names_what_was_awaited():
    with pytest.raises(Refused, match=r'timed out after 0s waiting for h1 to become '
                                      r'suspended \(still suspending\)'):
        _poll(['suspending'] * 5, timeout=0)


class _Hosts:
    """wait_host on a scripted sequence of ``GET /loadbalancer/{host}`` views."""

    error = Refused

    def __init__(self, views):
        self.views = iter(views)

    def get_host(self, host):
        return next(self.views)


def _wait_host(action, views, timeout=60):
    lines = []
    host = client.DrsClient.wait_host(_Hosts(views), 'h1', action, timeout, 0, lines.append)
    return host, lines


def test_exit_maintenance_waits_for_nova_compute_enabled():
    views = [{'suspend_state': 'maintenance', 'compute_service': 'disabled'},
             {'suspend_state': 'active', 'compute_service': 'disabled'},
             {'suspend_state': 'active', 'compute_service': 'enabled'}]
    host, lines = _wait_host('exit_maintenance', views)
    assert host['compute_service'] == 'enabled'
    assert lines == ['h1: maintenance (nova-compute disabled)',
                     'h1: active (nova-compute disabled)',
                     'h1: active (nova-compute enabled)']


def test_exit_maintenance_times_out_naming_the_service():
    with pytest.raises(Refused, match='with nova-compute enabled .still active, '
                                      'nova-compute still disabled'):
        _wait_host('exit_maintenance',
                   [{'suspend_state': 'active', 'compute_service': 'disabled'}] * 3, 0)


def test_wait_prints_why_a_maintenance_waits():
    reason = 'cannot enter maintenance yet: migration of s1 failed; woke h2 to make room'
    views = [{'suspend_state': 'entering_maintenance', 'state_reason': None},
             {'suspend_state': 'entering_maintenance', 'state_reason': reason},
             {'suspend_state': 'maintenance', 'state_reason': 'in maintenance'}]
    _, lines = _wait_host('enter_maintenance', views)
    assert lines == ['h1: entering_maintenance', 'h1: entering_maintenance: ' + reason,
                     'h1: maintenance: in maintenance']
