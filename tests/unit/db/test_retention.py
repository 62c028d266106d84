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

"""Retention of the history tables, on the tier's SQLite ``database`` (conftest.py).

tests/component/db/test_retention.py runs the tests that take it again on
MariaDB.
"""

import datetime

from oslo_utils import timeutils
import pytest
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.cmd import manage
from nova_drs.daemon import history_purge
from nova_drs.db import api
from nova_drs.db import hosts
from nova_drs.db import models
from nova_drs.observability import metrics
from tests import config_files

NOW = datetime.datetime(2026, 6, 1, 12, 0, 0)
HOUR = datetime.timedelta(hours=1)


def _insert(database, model, rows):
    with database.writer() as session:
        session.execute(model.__table__.insert(), rows)


def _rows(database, model, *columns):
    table = model.__table__
    with database.reader() as session:
        return sorted(tuple(row) for row in session.execute(
            sa.select(*[table.c[name] for name in columns])))


def _migration(uuid, age, status):
    created = NOW - age
    return {'instance_uuid': uuid, 'source': 'h1', 'destination': 'h2', 'kind': 'live',
            'reason': 'overload', 'status': status, 'created_at': created,
            'finished_at': None if status == 'requested' else created}


def test_purge_keeps_what_live_logic_reads(tmp_path, database):
    """Old finished rows go; open migrations and requests, recent rows, and each
    host's newest state and ratios before the cut-off stay."""
    conf = config_files.load(tmp_path, '[drs_retention]\nmigrations = 48\nstate_changes = 48\n'
                           'requests = 48\nratio_history = 48\npurge_batch_size = 2\n')
    old, recent = 72 * HOUR, HOUR
    _insert(database, models.LbMigration, [
        _migration('old-done', old, 'done'), _migration('old-failed', old, 'failed'),
        _migration('old-open', old, 'requested'), _migration('new-done', recent, 'done')])
    _insert(database, models.DrsHostStateChange, [
        {'host': 'a', 'state': 'suspending', 'changed_at': NOW - 80 * HOUR},
        {'host': 'a', 'state': 'suspended', 'changed_at': NOW - 79 * HOUR},
        {'host': 'a', 'state': 'waking', 'changed_at': NOW - recent},
        {'host': 'b', 'state': 'suspending', 'changed_at': NOW - 90 * HOUR},
        {'host': 'b', 'state': 'suspended', 'changed_at': NOW - 89 * HOUR}])
    _insert(database, models.LbRequest, [
        {'host': 'h1', 'action': 'wake_test', 'status': 'done',
         'created_at': NOW - old, 'finished_at': NOW - old},
        {'host': 'h2', 'action': 'wake_test', 'status': 'pending', 'created_at': NOW - old,
         'finished_at': None},
        {'host': 'h3', 'action': 'wake_test', 'status': 'failed',
         'created_at': NOW - old, 'finished_at': NOW - recent}])
    _insert(database, models.HostRatioHistory, [
        {'host': 'a', 'cpu_allocation_ratio': 1.0, 'ram_allocation_ratio': 1.0,
         'since': NOW - 100 * HOUR},
        {'host': 'a', 'cpu_allocation_ratio': 2.0, 'ram_allocation_ratio': 1.0,
         'since': NOW - 90 * HOUR}])

    dry = history_purge.purge(database, conf, NOW, dry_run=True)
    assert dry['lb_migrations'] == (2, True)
    assert dry['drs_host_state_changes'] == (2, True)
    assert dry['lb_requests'] == (1, True)
    assert dry['host_ratio_history'] == (1, True)
    assert len(_rows(database, models.LbMigration, 'id')) == 4  # a dry run deletes nothing

    done = history_purge.purge(database, conf, NOW)
    assert {name: rows for name, (rows, _) in done.items() if rows} == {
        'lb_migrations': 2, 'drs_host_state_changes': 2, 'lb_requests': 1,
        'host_ratio_history': 1}
    assert _rows(database, models.LbMigration, 'instance_uuid') == [
        ('new-done',), ('old-open',)]
    assert _rows(database, models.DrsHostStateChange, 'host', 'state') == [
        ('a', 'suspended'), ('a', 'waking'), ('b', 'suspended')]
    assert _rows(database, models.LbRequest, 'host') == [('h2',), ('h3',)]
    assert _rows(database, models.HostRatioHistory, 'cpu_allocation_ratio') == [(2.0,)]


def test_backlog_is_deleted_in_short_batches(database):
    """No DELETE ever touches more than one batch; a bounded run says it is not done."""
    rows = [{'cycle_at': NOW - 48 * HOUR, 'subject_type': 'host', 'subject': 'h%d' % i,
             'verdict': 'keep', 'reason': 'x'} for i in range(2500)]
    _insert(database, models.LbDecision, rows)
    deletes = []

    def count_deletes(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith('DELETE'):
            deletes.append(cursor.rowcount)

    sa.event.listen(database.engine, 'after_cursor_execute', count_deletes)
    try:
        policy = history_purge.BY_NAME['lb_decisions']
        assert history_purge.purge_table(database, policy, 24, NOW, 1000, max_batches=2) == (
            2000, False)
        assert history_purge.purge_table(database, policy, 24, NOW, 1000) == (500, True)
    finally:
        sa.event.remove(database.engine, 'after_cursor_execute', count_deletes)
    assert deletes == [1000, 1000, 500]
    assert _rows(database, models.LbDecision, 'id') == []


def _records(database):
    return {record['host']: record for record in hosts.list_with_power(database)}


def test_records_of_removed_computes_go_after_the_grace_only_when_active(tmp_path, database):
    conf = config_files.load(tmp_path, '[drs_retention]\nremoved_host_grace = 2\n')
    for host in ('kept', 'gone', 'asleep', 'back'):
        hosts.ensure(database, host)
    hosts.transition(database, 'asleep', 'active', 'suspending', 'test')
    hosts.transition(database, 'asleep', 'suspending', 'suspended', 'test')
    purge = history_purge.DaemonPurge(conf, database)
    # nova no longer lists gone, asleep (its service record deleted while it
    # sleeps) nor, for a while, back.
    purge.run({'kept'}, _records(database), NOW)
    purge.run({'kept'}, _records(database), NOW + HOUR)
    assert set(_records(database)) == {'kept', 'gone', 'asleep', 'back'}  # within grace
    purge.run({'kept', 'back'}, _records(database), NOW + HOUR)  # back is listed again
    # An empty listing is a fault of nova's, never "every host was removed".
    assert 'drs_hosts' not in purge.run(set(), _records(database), NOW + 2 * HOUR)
    assert set(_records(database)) == {'kept', 'gone', 'asleep', 'back'}
    purge.next_at = None
    deleted = purge.run({'kept', 'back'}, _records(database), NOW + 2 * HOUR)
    assert deleted.get('drs_hosts') == 1
    assert set(_records(database)) == {'kept', 'asleep', 'back'}
    # back's grace restarted when nova listed it again.
    purge.next_at = None
    purge.run({'kept'}, _records(database), NOW + 3 * HOUR)
    assert 'back' in _records(database)
    purge.next_at = None
    purge.run({'kept'}, _records(database), NOW + 5 * HOUR)
    assert set(_records(database)) == {'kept', 'asleep'}


def test_a_host_that_moved_since_the_check_is_not_deleted(database):
    hosts.ensure(database, 'h1')
    assert hosts.removable(database, {'h1'}) == {'h1'}
    hosts.transition(database, 'h1', 'active', 'suspending', 'admin')  # meanwhile
    assert hosts.delete_removed(database, {'h1'}, 100) == 0
    assert hosts.get(database, 'h1') is not None


def test_daemon_purge_runs_once_per_interval_and_never_raises(tmp_path, database):
    conf = config_files.load(tmp_path, '[drs_retention]\nmigrations = 48\npurge_interval = 3600\n')
    _insert(database, models.LbMigration, [_migration('u1', 72 * HOUR, 'done')])
    purge = history_purge.DaemonPurge(conf, database)
    assert purge.run({'h'}, {}, NOW) == {'lb_migrations': 1}
    _insert(database, models.LbMigration, [_migration('u2', 72 * HOUR, 'done')])
    assert purge.run({'h'}, {}, NOW + datetime.timedelta(minutes=30)) == {}  # not due
    assert purge.run({'h'}, {}, NOW + HOUR) == {'lb_migrations': 1}
    database.dispose()
    broken = history_purge.DaemonPurge(conf, api.Database('sqlite:////nonexistent/dir/x.db'))
    assert broken.run({'h'}, {}, NOW) == {}


def test_migration_retention_shorter_than_the_windows_it_serves_is_refused(tmp_path):
    conf = config_files.load(tmp_path, '[drs_retention]\nmigrations = 12\n')  # < 24 h window
    with pytest.raises(exception.ConfigError, match=r'\[drs_retention\] migrations \(12 h\) '
                       r'must exceed \[drs_oscillation\] oscillation_window'):
        drs_conf.validate(conf)
    conf = config_files.load(tmp_path, '[drs_retention]\nmigrations = 48\n[loadbalancer]\n'
                           'migration_cooldown = 200000\n')
    with pytest.raises(exception.ConfigError, match='migration_cooldown'):
        drs_conf.validate(conf)


def _conf_file(tmp_path, body=''):
    path = tmp_path / 'nova.conf'
    path.write_text('[drs]\nstate_path = %s\n%s' % (tmp_path / 'state', body))
    return str(path)


def test_manage_db_purge_dry_run_then_purge(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[drs_retention]\nmigrations = 48\n')
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 0
    database = api.Database('sqlite:///%s' % (tmp_path / 'state' / 'nova_drs.sqlite'))
    now = timeutils.utcnow()
    _insert(database, models.LbMigration, [
        dict(_migration('u1', HOUR, 'done'), created_at=now - 72 * HOUR,
             finished_at=now - 72 * HOUR)])
    capsys.readouterr()
    assert manage.main(['--config-file', conf, 'db', 'purge', '--dry-run']) == 0
    assert 'lb_migrations: would delete 1 rows' in capsys.readouterr().out
    assert len(_rows(database, models.LbMigration, 'id')) == 1
    assert manage.main(['--config-file', conf, 'db', 'purge', '--table', 'lb_migrations']) == 0
    out = capsys.readouterr().out
    assert out.strip() == 'lb_migrations: deleted 1 rows'
    assert _rows(database, models.LbMigration, 'id') == []


def test_manage_refuses_too_short_retention_in_one_line(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[drs_retention]\nmigrations = 1\n')
    assert manage.main(['--config-file', conf, 'db', 'purge']) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith('nova-drs-manage: [drs_retention] migrations (1 h) must exceed')


def test_metrics_count_a_bounded_window(tmp_path, database):
    """Scrapes read the last hour, not the whole table: an old row is not counted."""
    now = timeutils.utcnow()
    _insert(database, models.LbMigration, [
        dict(_migration('old', HOUR, 'done'), created_at=now - 5 * HOUR,
             finished_at=now - 5 * HOUR),
        dict(_migration('new', HOUR, 'done'), created_at=now - datetime.timedelta(minutes=5),
             finished_at=now - datetime.timedelta(minutes=4)),
        dict(_migration('open', HOUR, 'requested'), created_at=now - 5 * HOUR)])
    _insert(database, models.DrsHostStateChange, [
        {'host': 'a', 'state': 'suspended', 'changed_at': now - 5 * HOUR},
        {'host': 'a', 'state': 'waking', 'changed_at': now - datetime.timedelta(minutes=3)}])
    collector = metrics.DatabaseCollector(database, config_files.load(tmp_path))
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in list(collector._migrations()) + list(collector._transitions())
               for s in family.samples}
    assert samples[('nova_drs_migrations_requested_last_hour', (('reason', 'overload'),))] == 1
    assert samples[('nova_drs_migrations_finished_last_hour',
                    (('reason', 'overload'), ('status', 'done')))] == 1
    assert samples[('nova_drs_migrations_in_progress', ())] == 1
    assert samples[('nova_drs_host_transitions_last_hour', (('state', 'waking'),))] == 1
    assert ('nova_drs_host_transitions_last_hour', (('state', 'suspended'),)) not in samples


def test_manage_db_purge_covers_finished_plans(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[loadbalancer]\nplan_retention = 24\n')
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 0
    database = api.Database('sqlite:///%s' % (tmp_path / 'state' / 'nova_drs.sqlite'))
    old = timeutils.utcnow() - 48 * HOUR
    _insert(database, models.LbPlan, [
        {'mode': 'manual', 'status': 'done', 'created_at': old, 'updated_at': old},
        {'mode': 'manual', 'status': 'pending', 'created_at': old, 'updated_at': None}])
    capsys.readouterr()
    assert manage.main(['--config-file', conf, 'db', 'purge', '--dry-run',
                        '--table', 'lb_plans']) == 0
    assert capsys.readouterr().out.strip() == 'lb_plans: would delete 1 finished plans'
    assert manage.main(['--config-file', conf, 'db', 'purge', '--table', 'lb_plans']) == 0
    assert capsys.readouterr().out.strip() == 'lb_plans: deleted 1 finished plans'
    assert _rows(database, models.LbPlan, 'status') == [('pending',)]
