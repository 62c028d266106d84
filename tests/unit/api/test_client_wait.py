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
