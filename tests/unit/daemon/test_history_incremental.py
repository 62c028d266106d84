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

"""The daemon's statistics history, topped up from a DRS database.

A steady read takes each sample once, by ingest order (a round is 100,000
rows at 100,000 instances); one compute's clock ahead and a collector
backlog hide no host's samples; a host whose samples stop goes stale while a
skewed one does not; a restarted daemon rebuilds the same history from the
database. On SQLite here; tests/component/daemon/test_history_incremental.py
runs them again on MariaDB and PostgreSQL, with the read of a row committed
after a higher id (concurrent writers, which SQLite has not).
"""

import datetime

import sqlalchemy as sa

from nova_drs.daemon import cloud_view
from nova_drs.daemon import observe
from nova_drs.daemon import stats_history
from nova_drs.db import statistics as db_statistics
from nova_drs.stats import ingest

#: The computes' clocks: two days behind the database server (this is also
#: what a backlog or a compute behind looks like to a read by sampled_at).
T0 = datetime.datetime.now(datetime.timezone.utc).replace(
    tzinfo=None, microsecond=0) - datetime.timedelta(days=2)
WINDOW = datetime.timedelta(hours=1)
HOSTS = ('h1', 'h2', 'h3')


def _sample(host, at, cpu=50.0):
    return {'host': host, 'sampled_at': at.isoformat(),
            'host_stats': {'cpu_used_percent': cpu},
            'instances': [{'instance_uuid': '%s-vm%d' % (host, i), 'cpu_used_percent': cpu}
                          for i in range(3)]}


def _store(database, host, minute, cpu=50.0):
    ingest.insert_samples(database, [
        _sample(host, T0 + datetime.timedelta(minutes=minute), cpu)])


def _unread(database, history):
    """What the next read_statistics would fetch: (host rows, instance rows)."""
    received = db_statistics.read_received(database, history.window,
                                           history.host_ids.position(),
                                           history.instance_ids.position())
    return received.hosts, received.instances


def _history(database):
    history = stats_history.History(3)
    history.clear(WINDOW)
    stats_history.read_statistics(database, history)
    return history


def test_a_steady_read_takes_each_sample_once(database):
    for minute in (0, 1):
        for host in ('h1', 'h2'):
            _store(database, host, minute)
    history = _history(database)
    assert len(history.instances) == 6
    assert _unread(database, history) == ([], [])
    _store(database, 'h1', 2, cpu=80.0)
    hosts, instances = _unread(database, history)
    assert [row.host for row in hosts] == ['h1']
    assert sorted(row.instance_uuid for row in instances) == ['h1-vm0', 'h1-vm1', 'h1-vm2']
    stats_history.read_statistics(database, history)
    assert history.cpu['h1-vm0'] == (0.5, 0.5, 0.8)
    assert _unread(database, history) == ([], [])


def test_a_clock_ahead_and_a_backlog_hide_no_host(database):
    """The acceptance case: h1's clock is 120 s ahead, h3's samples arrive in
    one 5-minute backlog; every host's newest sample is in every read.
    Reading by sampled_at (newest held - 30 s) missed h2 and h3 every time."""
    history = _history(database)
    backlog = []
    for minute in range(1, 11):
        at = T0 + datetime.timedelta(minutes=minute)
        batch = [_sample('h1', at + datetime.timedelta(seconds=120)), _sample('h2', at)]
        backlog.append(_sample('h3', at))
        if minute % 5 == 0:   # the collector delivers h3's 5 minutes at once
            batch, backlog = batch + backlog, []
        ingest.insert_samples(database, batch)
        stats_history.read_statistics(database, history)
        assert history.hosts['h1'][0][0] == at + datetime.timedelta(seconds=120)
        assert history.hosts['h2'][0][0] == at
        assert history.instances['h2-vm0'][0][0] == at
        if minute % 5 == 0:
            assert history.hosts['h3'][0][0] == at
            assert len(history.hosts['h3']) == 3      # the backlog, read once
            assert history.cpu['h3-vm2'] == (0.5, 0.5, 0.5)
        view = cloud_view.build_view(_raw(history, now=at), cloud_view.Rules([]),
                                     stats_max_age=120)
        assert view.stale_hosts == (() if minute >= 5 else ('h3',))


def test_a_host_whose_samples_stop_goes_stale_and_restart_rebuilds(database):
    for minute in (0, 1):
        for host in ('h1', 'h2'):
            _store(database, host, minute)
    history = _history(database)
    for minute in (2, 3, 4):
        _store(database, 'h1', minute, cpu=10.0 * minute)   # h2 stops sampling
        stats_history.read_statistics(database, history)
    assert history.hosts['h2'][0][0] == T0 + datetime.timedelta(minutes=1)
    # The database received h2's last sample 5 minutes ago (its own clock).
    with database.writer() as session:
        session.execute(db_statistics.HOSTS.update().where(
            db_statistics.HOSTS.c.host == 'h2').values(
                created_at=db_statistics.server_now(session) - datetime.timedelta(minutes=5)))
    restarted = _history(database)
    view = cloud_view.build_view(_raw(restarted), cloud_view.Rules([]), stats_max_age=120)
    # h1's samples are stamped two days ago: its compute's clock is not the
    # judge. (h3 never sent one.)
    assert view.stale_hosts == ('h2', 'h3')
    assert 250 < restarted.ages()['h2'] < 350
    assert restarted.hosts == history.hosts
    assert restarted.instances == history.instances
    assert restarted.cpu == history.cpu


def test_ids_given_out_again_read_the_history_again(database):
    _store(database, 'h1', 0)
    history = _history(database)
    with database.writer() as session:   # emptied, e.g. by the retention
        for table in (db_statistics.HOSTS, db_statistics.INSTANCES):
            session.execute(sa.delete(table))
    stats_history.read_statistics(database, history)
    _store(database, 'h2', 1)
    stats_history.read_statistics(database, history)
    assert history.hosts['h2'][0][0] == T0 + datetime.timedelta(minutes=1)


def _raw(history, now=T0):
    return observe.Raw(
        services={h: {'host': h, 'status': 'enabled'} for h in HOSTS},
        hypervisors=[{'id': h, 'service': {'host': h}} for h in HOSTS],
        aggregates=[], servers={}, groups=[], migrations=[], inventories={},
        records={h: {'suspend_state': 'active', 'disabled_by_drs': False} for h in HOSTS},
        requests=[], host_samples=history.hosts, instance_samples=history.instances,
        cpu_history=history.cpu, suspendable={}, now=now, stats_age=history.ages())
