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

"""The recorder gives a created instance the ratios it landed with.

nova-drs handles nova's notifications asynchronously: instance.create.end
may be handled after the host's ratio was raised, or twice. Recording the
raised ratio would count the instance at less than its guaranteed share and
the scheduler would admit one instance too many.
"""

import datetime

from oslo_utils import timeutils
import pytest

from nova_drs.db import api
from nova_drs.db import migration
from nova_drs.db import overcommit as db_overcommit
from nova_drs.overcommit import recorder

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0)


def make(tmp_path, ratios):
    db = api.Database('sqlite:///%s' % (tmp_path / 'drs.sqlite'))
    migration.sync(db)
    return db, recorder.OvercommitRecorder(db, lambda host: ratios[host])


def created(uuid, host='h', launched_at=T0, event='instance.create.end'):
    data = {'uuid': uuid, 'host': host,
            'flavor': {'nova_object.data': {'vcpus': 1, 'memory_mb': 64}}}
    if launched_at is not None:
        data['launched_at'] = launched_at.strftime('%Y-%m-%dT%H:%M:%SZ')
    return event, {'nova_object.data': data}


def cpu_ratio(db, uuid):
    return db_overcommit.get(db, uuid)['cpu_allocation_ratio']


@pytest.fixture
def now():
    """Sets oslo_utils' clock (its own override, which oslo.db's timestamps
    read on every release): the recorder notes the ratios it sees at that time."""
    yield timeutils.set_time_override
    timeutils.clear_time_override()


def test_a_late_create_end_gets_the_ratio_in_force_at_launch(tmp_path, now):
    db, rec = make(tmp_path, {'h': (2.0, 1.0)})
    db_overcommit.note_ratios(db, 'h', 1.0, 1.0, T0 - datetime.timedelta(hours=1))
    now(T0 + datetime.timedelta(minutes=5))  # raised to 2.0 after T0, handled now
    rec.handle(*created('late'))
    assert cpu_ratio(db, 'late') == 1.0
    # the raise entered the history when it was first seen: later launches get it
    rec.handle(*created('after', launched_at=T0 + datetime.timedelta(minutes=6)))
    assert cpu_ratio(db, 'after') == 2.0


def test_a_create_end_handled_again_keeps_the_recorded_ratio(tmp_path, now):
    ratios = {'h': (1.0, 1.0)}
    db, rec = make(tmp_path, ratios)
    now(T0)
    rec.handle(*created('twice'))
    ratios['h'] = (2.0, 1.5)
    now(T0 + datetime.timedelta(minutes=5))
    rec.handle(*created('twice'))
    assert db_overcommit.get(db, 'twice')['cpu_allocation_ratio'] == 1.0
    assert db_overcommit.get(db, 'twice')['ram_allocation_ratio'] == 1.0


def test_without_history_or_launch_time_the_current_ratios(tmp_path, now):
    db, rec = make(tmp_path, {'h': (2.0, 1.5), 'h2': (3.0, 1.0)})
    now(T0 + datetime.timedelta(minutes=5))
    rec.handle(*created('no-launch', launched_at=None))
    rec.handle(*created('before-history', host='h2'))
    assert cpu_ratio(db, 'no-launch') == 2.0
    assert cpu_ratio(db, 'before-history') == 3.0


def test_a_move_lands_with_the_current_ratios(tmp_path, now):
    ratios = {'h': (1.0, 1.0), 'h2': (1.0, 1.0)}
    db, rec = make(tmp_path, ratios)
    now(T0)
    rec.handle(*created('moved'))
    ratios['h2'] = (2.0, 1.0)
    now(T0 + datetime.timedelta(minutes=5))
    rec.handle(*created('moved', host='h2', event='instance.live_migration_post_dest.end'))
    assert (db_overcommit.get(db, 'moved')['host'], cpu_ratio(db, 'moved')) == ('h2', 2.0)
