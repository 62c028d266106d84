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

import datetime

import pytest
import sqlalchemy as sa

from nova_drs import exception
from nova_drs.db import api
from nova_drs.db import hosts
from nova_drs.db import migration
from nova_drs.db import models


def _tables(database):
    return set(sa.inspect(database.engine).get_table_names())


@pytest.fixture
def database(empty_database):
    """A database without schema (conftest.py): SQLite here, the real servers
    when tests/component/db/test_database.py runs these tests again."""
    return empty_database


def test_sync_creates_schema_and_second_sync_is_noop(database):
    assert migration.current_revision(database) is None
    migration.sync(database)
    head = migration.head_revision()
    assert migration.current_revision(database) == head
    expected = {'drs_hosts', 'compute_node_stats', 'instance_stats', 'lb_rules'}
    assert expected <= _tables(database)
    before = _tables(database)
    migration.sync(database)
    assert migration.current_revision(database) == head
    assert _tables(database) == before


def test_models_match_migrations(database):
    """The ORM models and the alembic scripts describe the same tables."""
    migration.sync(database)
    inspector = sa.inspect(database.engine)
    for table in models.Base.metadata.sorted_tables:
        columns = {c['name'] for c in inspector.get_columns(table.name)}
        assert columns == {c.name for c in table.columns}, table.name


def test_host_transitions_are_compare_and_swap(database):
    migration.sync(database)
    assert hosts.ensure(database, 'compute1', 'compute1.example') is True
    assert hosts.ensure(database, 'compute1') is False
    version = hosts.transition(database, 'compute1', hosts.ACTIVE, hosts.SUSPENDING, 'test')
    assert version == 1
    # A second actor that still believes the host is active loses the race.
    assert hosts.transition(database, 'compute1', hosts.ACTIVE, hosts.SUSPENDING, 'x') is None
    record = hosts.get(database, 'compute1')
    assert record['suspend_state'] == hosts.SUSPENDING
    assert record['state_reason'] == 'test'
    assert hosts.states(database) == {'compute1': hosts.SUSPENDING}
    assert hosts.transition(database, 'unknown', hosts.ACTIVE, hosts.SUSPENDING, 'x') is None


def test_illegal_transition_refused(tmp_path):
    database = api.Database('sqlite:///%s' % (tmp_path / 'drs.sqlite'))
    migration.sync(database)
    hosts.ensure(database, 'compute1')
    with pytest.raises(exception.IllegalTransition):
        hosts.transition(database, 'compute1', hosts.ACTIVE, hosts.SUSPENDED, 'skip')
    with pytest.raises(ValueError):
        hosts.set_fields(database, 'compute1', suspend_state='suspended')


@pytest.mark.parametrize('url, message', [
    ('nosuchdialect://x/y', 'invalid database URL nosuchdialect://x/y'),
    ('not a url', 'invalid database URL'),
])
def test_bad_url_is_a_clear_error(url, message):
    with pytest.raises(exception.DatabaseError) as error:
        migration.sync(api.Database(url))
    assert message in str(error.value)


def test_unreachable_server_error_hides_password():
    database = api.Database('mysql+pymysql://drs:s3cret@127.0.0.1:1/nova_drs',
                            max_retries=0)
    with pytest.raises(exception.DatabaseError) as error:
        migration.sync(database)
    assert 'cannot connect to mysql+pymysql://drs:***@127.0.0.1:1/nova_drs' in str(error.value)
    assert 's3cret' not in str(error.value)


def test_suspend_cannot_be_cancelled_once_power_command_left(tmp_path):
    database = api.Database('sqlite:///%s' % (tmp_path / 'drs.sqlite'))
    migration.sync(database)
    hosts.ensure(database, 'compute1')
    hosts.transition(database, 'compute1', hosts.ACTIVE, hosts.SUSPENDING, 'test')
    hosts.set_fields(database, 'compute1', power_requested_at=datetime.datetime(2026, 1, 1))
    assert hosts.transition(database, 'compute1', hosts.SUSPENDING, hosts.ACTIVE, 'x') is None
    assert hosts.transition(database, 'compute1', hosts.SUSPENDING, hosts.SUSPENDED, 'x')


def test_decisions_last_cycles_and_prune(database):
    """drs explain's queries on every supported database (one INSERT, one DELETE)."""
    from nova_drs.db import decisions
    migration.sync(database)
    start = datetime.datetime(2026, 1, 1)
    decisions.save(database, [
        decisions.row(start + datetime.timedelta(minutes=m), kind, 'h1', 'kept', 'cycle %d' % m,
                      refused=(('h2', 'capacity'),))
        for m in range(4) for kind in ('host', 'server')])
    found = decisions.explain(database, 'host', 'h1', 2)
    assert [d['reason'] for d in found] == ['cycle 3', 'cycle 2']
    assert found[0]['refused'] == [{'host': 'h2', 'refusal': 'capacity'}]
    assert len(decisions.explain(database, 'host', 'h1', 100)) == 4
    assert decisions.prune(database, start + datetime.timedelta(hours=1, minutes=2), 1) == 4
    assert [d['reason'] for d in decisions.explain(database, 'server', 'h1', 100)] == [
        'cycle 3', 'cycle 2']
