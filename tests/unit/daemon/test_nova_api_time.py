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

"""nova's timestamps, with or without a UTC offset, compare as naive UTC."""

import datetime

from nova_drs.clients import nova_api

TEN = datetime.datetime(2026, 11, 23, 10, 0, 0)


def test_offsets_are_applied_not_dropped():
    assert nova_api.parse_time('2026-11-23T12:00:00+02:00') == TEN
    assert nova_api.parse_time('2026-11-23T05:00:00-05:00') == TEN


def test_nova_shapes_parse_to_naive_utc():
    for value in ('2026-11-23T10:00:00.000000', '2026-11-23T10:00:00Z',
                  '2026-11-23 10:00:00'):
        assert nova_api.parse_time(value) == TEN
    assert nova_api.parse_time(None) is None
    assert nova_api.parse_time('') is None
