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

"""The daemon's statistics history, topped up from a real DRS database.

A steady cycle reads the instance samples it lacks and not the ones it holds
(a round is 100,000 rows at 100,000 instances); a late host sample still
brings its instances; a host whose samples stop goes stale; a restarted
daemon rebuilds the same history from the database.
"""

import datetime

import pytest

from nova_drs.daemon import cloud_view
from nova_drs.daemon import observe
from nova_drs.daemon import stats_history
from nova_drs.db import api
from nova_drs.db import migration
from nova_drs.db import statistics as db_statistics
from nova_drs.stats import ingest
from tests import services

T0 = datetime.datetime(2026, 11, 23, 12, 0, 0)
START = T0 - datetime.timedelta(hours=1)


@pytest.fixture(params=['sqlite', 'mariadb', 'postgresql'])
def database(request, tmp_path):
    scratch = None
    if request.param == 'sqlite':
        url = 'sqlite:///%s' % (tmp_path / 'drs.sqlite')
    else:
        scratch = services.ScratchDatabase(request.param)
        url = scratch.url
    db = api.Database(url)
    migration.sync(db)
    yield db
    db.dispose()
    if scratch:
        scratch.drop()


def _store(database, host, minute, cpu=50.0):
    at = T0 + datetime.timedelta(minutes=minute)
    ingest.insert_samples(database, [{
        'host': host, 'sampled_at': at.isoformat(),
        'host_stats': {'cpu_used_percent': cpu},
        'instances': [{'instance_uuid': '%s-vm%d' % (host, i), 'cpu_used_percent': cpu}
                      for i in range(3)]}])


def _instance_rows_read(database, history):
    """What the next read_statistics would fetch from instance_stats."""
    host_rows = db_statistics.host_cpu_since(database, history.since())
    return db_statistics.instance_cpu_since(database, *history.unseen(host_rows))


def _history(database):
    history = stats_history.History(3)
    history.clear(START)
    stats_history.read_statistics(database, history)
    return history


def test_steady_read_fetches_only_new_instance_samples(database):
    for minute in (0, 1):
        for host in ('h1', 'h2'):
            _store(database, host, minute)
    history = _history(database)
    assert len(history.instances) == 6
    assert _instance_rows_read(database, history) == []
    _store(database, 'h1', 2, cpu=80.0)
    rows = _instance_rows_read(database, history)
    assert sorted(uuid for uuid, _at, _cpu in rows) == ['h1-vm0', 'h1-vm1', 'h1-vm2']
    stats_history.read_statistics(database, history)
    assert history.cpu['h1-vm0'] == (0.5, 0.5, 0.8)


def test_late_host_sample_brings_its_instances(database):
    _store(database, 'h1', 0)
    _store(database, 'h1', 1)
    history = _history(database)
    # h2's sample is stored after the read, 15 s older than the newest held
    # (within stats_history.STATS_OVERLAP).
    _store(database, 'h2', 0.75, cpu=20.0)
    rows = _instance_rows_read(database, history)
    assert sorted(uuid for uuid, _at, _cpu in rows) == ['h2-vm0', 'h2-vm1', 'h2-vm2']
    stats_history.read_statistics(database, history)
    assert history.cpu['h2-vm1'] == (0.2,)
    assert history.hosts['h2'][0][0] == T0 + datetime.timedelta(seconds=45)


def test_stopped_host_goes_stale_and_restart_rebuilds_the_same_history(database):
    for minute in (0, 1):
        for host in ('h1', 'h2'):
            _store(database, host, minute)
    history = _history(database)
    for minute in (2, 3, 4):
        _store(database, 'h1', minute, cpu=10.0 * minute)   # h2 stops sampling
        stats_history.read_statistics(database, history)
    assert history.hosts['h2'][0][0] == T0 + datetime.timedelta(minutes=1)
    raw = observe.Raw(
        services={h: {'host': h, 'status': 'enabled'} for h in ('h1', 'h2')},
        hypervisors=[{'id': h, 'service': {'host': h}} for h in ('h1', 'h2')],
        aggregates=[], servers={}, groups=[], migrations=[], inventories={},
        records={h: {'suspend_state': 'active', 'disabled_by_drs': False}
                 for h in ('h1', 'h2')},
        requests=[], host_samples=history.hosts, instance_samples=history.instances,
        cpu_history=history.cpu, suspendable={},
        now=T0 + datetime.timedelta(minutes=4, seconds=30))
    view = cloud_view.build_view(raw, cloud_view.Rules([]), stats_max_age=120)
    assert view.stale_hosts == ('h2',)
    restarted = _history(database)
    assert restarted.hosts == history.hosts
    assert restarted.instances == history.instances
    assert restarted.cpu == history.cpu
