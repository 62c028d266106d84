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

"""Which BMCs a cycle reads: the least recently tried, within the limit."""

import datetime

from nova_drs.daemon import measure

T0 = datetime.datetime(2026, 11, 23, 12, 0)


def records(*hosts):
    return [{'host': host} for host in hosts]


def test_never_tried_first_then_oldest_then_by_name():
    tried = {'a': T0, 'b': T0 - datetime.timedelta(minutes=5), 'c': T0}
    chosen = measure.due(records('c', 'a', 'b', 'd'), tried, 3)
    assert [r['host'] for r in chosen] == ['d', 'b', 'a']


def test_limit_bounds_the_batch_and_rotation_reaches_everyone():
    hosts = ['h%02d' % i for i in range(10)]
    tried, seen = {}, []
    for cycle in range(4):
        now = T0 + datetime.timedelta(minutes=cycle)
        batch = measure.due(records(*hosts), tried, 3)
        assert len(batch) == 3
        tried.update((r['host'], now) for r in batch)
        seen.extend(r['host'] for r in batch)
    assert set(seen) == set(hosts)  # 10 hosts, 3 per cycle: all read within 4 cycles
