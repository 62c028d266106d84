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

"""build_view: per-server opt-out levels, and last_migrated_at from nova's records and
the daemon's own requests (the one cooldown rule)."""

import datetime
import logging

import pytest

from nova_drs import conf as drs_conf
from nova_drs import opt_out
from nova_drs.daemon import cloud_view
from tests.unit.daemon import test_build_view as base

NOW = base.NOW


def _stamp(seconds_ago):
    return (NOW - datetime.timedelta(seconds=seconds_ago)).isoformat()


def _view(**changes):
    return cloud_view.build_view(base._raw(**changes), cloud_view.Rules([]), stats_max_age=600)


def _migration(uuid, kind='live-migration', status='completed', seconds_ago=60,
               source='h9'):
    return {'instance_uuid': uuid, 'migration_type': kind, 'status': status,
            'source_compute': source,
            'created_at': _stamp(seconds_ago + 30), 'updated_at': _stamp(seconds_ago)}


def test_last_migrated_at_comes_from_nova_migration_records():
    view = _view(recent_migrations=[
        _migration('s1', seconds_ago=600, source='old'), _migration('s1', seconds_ago=60),
        _migration('s2', kind='migration', status='running', seconds_ago=30)])
    instances = {i.uuid: i for i in view.snapshot.instances}
    assert instances['s1'].last_migrated_at == NOW.timestamp() - 60
    assert instances['s2'].last_migrated_at == NOW.timestamp() - 30
    # the host it left is not its destination while it cools down
    assert instances['s1'].left_host == 'h9'


@pytest.mark.parametrize('kind,status', [('live-migration', 'failed'),
                                         ('migration', 'error'),
                                         ('live-migration', 'cancelled'),
                                         ('resize', 'completed'),
                                         ('evacuation', 'completed')])
def test_failed_migrations_resizes_and_evacuations_do_not_count(kind, status):
    view = _view(recent_migrations=[_migration('s1', kind, status)])
    assert {i.uuid: i for i in view.snapshot.instances}['s1'].last_migrated_at is None


def _request(uuid, seconds_ago, source='h8', moved=True):
    return {'instance_uuid': uuid, 'source': source, 'moved': moved,
            'created_at': NOW - datetime.timedelta(seconds=seconds_ago)}


def test_the_daemons_own_requests_start_the_cooldown_before_nova_lists_them():
    """observe reads the daemon's requests (lb_migrations.requested_since)."""
    view = _view(recent_requests=[_request('s1', 5), _request('s1', 900),
                                  _request('s2', 20)],
                 recent_migrations=[_migration('s2', seconds_ago=600, source='h9')])
    instances = {i.uuid: i for i in view.snapshot.instances}
    assert (instances['s1'].last_migrated_at, instances['s1'].left_host) == (
        NOW.timestamp() - 5, 'h8')
    assert (instances['s2'].last_migrated_at, instances['s2'].left_host) == (
        NOW.timestamp() - 20, 'h8')


def test_a_failed_request_starts_the_cooldown_but_leaves_no_host():
    """One try per cooldown (the orchestrator's held_back): the planner does not
    offer the server again, and the server never left its host."""
    view = _view(recent_requests=[_request('s1', 10, moved=False),
                                  _request('s2', 900, source='h7'),
                                  _request('s2', 30, moved=False)])
    instances = {i.uuid: i for i in view.snapshot.instances}
    assert (instances['s1'].last_migrated_at, instances['s1'].left_host) == (
        NOW.timestamp() - 10, None)
    # The host its last real move left stays barred while it cools.
    assert (instances['s2'].last_migrated_at, instances['s2'].left_host) == (
        NOW.timestamp() - 30, 'h7')


def test_requested_since_marks_the_requests_that_failed(tmp_path):
    from nova_drs.db import api
    from nova_drs.db import lb_migrations
    from nova_drs.db import migration
    database = api.Database('sqlite:///%s' % (tmp_path / 'drs.sqlite'))
    migration.sync(database)
    for uuid, status in (('s1', 'failed'), ('s2', 'aborted'), ('s3', 'done'), ('s4', None)):
        request_id = lb_migrations.request(database, uuid, 'h1', 'h2', 'live', 'test')
        if status:
            lb_migrations.finish(database, request_id, status)
    since = NOW - datetime.timedelta(days=3650)
    assert sorted((r['instance_uuid'], bool(r['moved'])) for r in
                  lb_migrations.requested_since(database, since)) == [
        ('s1', False), ('s2', False), ('s3', True), ('s4', True)]


def _with_opt_out(metadata=None, extra_specs=None):
    raw = base._raw()
    raw.servers['s1']['metadata'] = metadata or {}
    raw.servers['s1']['flavor']['extra_specs'] = extra_specs or {}
    return cloud_view.build_view(raw, cloud_view.Rules([]), stats_max_age=600)


@pytest.fixture
def sources():
    """Sets ``[loadbalancer] opt_out_sources`` for one test."""
    def set_sources(value):
        drs_conf.CONF.set_override('opt_out_sources', value, 'loadbalancer')
    yield set_sources
    drs_conf.CONF.clear_override('opt_out_sources', 'loadbalancer')


BOTH = ['flavor_extra_spec', 'server_metadata']
FLAVOR = ['flavor_extra_spec']


@pytest.mark.parametrize('trusted,metadata,extra_specs,level', [
    (BOTH, {}, {}, None),
    (BOTH, {opt_out.KEY: 'disabled'}, {}, 'disabled'),
    (BOTH, {}, {opt_out.KEY: 'manual'}, 'manual'),
    (BOTH, {opt_out.KEY: 'manual'}, {opt_out.KEY: 'disabled'}, 'manual'),   # metadata wins
    (BOTH, {opt_out.KEY: 'Disabled '}, {}, 'disabled'),
    (BOTH, {opt_out.KEY: 'sometimes'}, {opt_out.KEY: 'manual'}, 'manual'),  # ignored
    (BOTH, {}, {opt_out.KEY: 'older-than-the-validator'}, None),
    (FLAVOR, {opt_out.KEY: 'disabled'}, {}, None),       # a project member's metadata
    (FLAVOR, {opt_out.KEY: 'manual'}, {opt_out.KEY: 'disabled'}, 'disabled'),
    ([], {opt_out.KEY: 'disabled'}, {opt_out.KEY: 'disabled'}, None),
])
def test_opt_out_level_pins_the_instance(sources, trusted, metadata, extra_specs, level):
    sources(trusted)
    view = _with_opt_out(metadata, extra_specs)
    s1 = {i.uuid: i for i in view.snapshot.instances}['s1']
    assert view.opt_out.get('s1') == level
    assert s1.movable is (level is None)


def test_default_sources_are_the_flavor_only():
    assert drs_conf.CONF.loadbalancer.opt_out_sources == FLAVOR


def test_invalid_value_is_ignored_with_one_warning(sources, caplog):
    sources(BOTH)
    caplog.set_level(logging.WARNING, logger='nova_drs.opt_out')
    for _ in range(3):
        view = _with_opt_out({opt_out.KEY: 'now-and-then'})
        assert 's1' not in view.opt_out
    assert sum('now-and-then' in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize('state,reason,overridden', [
    ('entering_maintenance', 'maintenance requested by admin', True),
    ('suspending', 'suspend requested by admin', False),
    ('suspending', 'suspend requested by admin (%s)' % opt_out.FORCED, True),
])
def test_maintenance_and_a_forced_suspend_move_opted_out_servers(state, reason, overridden):
    assert opt_out.overridden({'suspend_state': state, 'state_reason': reason}) is overridden


@pytest.mark.parametrize('level,automation,movable', [
    (None, 'automatic', True), (None, 'manual', True),
    ('manual', 'manual', True), ('manual', 'automatic', False),
    ('disabled', 'manual', False), ('disabled', 'automatic', False)])
def test_may_move(level, automation, movable):
    assert opt_out.may_move(level, automation) is movable


def test_old_option_name_is_still_read(tmp_path):
    import copy

    from oslo_config import cfg

    from nova_drs.conf import decision
    from nova_drs.conf import loadbalancer
    path = tmp_path / 'drs.conf'
    path.write_text('[loadbalancer]\ninstance_cooldown = 42\n')
    conf = cfg.ConfigOpts()
    # Copies: other tests may have changed the shared Opt objects' defaults.
    conf.register_opts(copy.deepcopy(decision.decision_opts), group='loadbalancer')
    conf.register_opts(copy.deepcopy(loadbalancer.daemon_opts), group='loadbalancer')
    conf(args=[], default_config_files=[str(path)])
    assert conf.loadbalancer.migration_cooldown == 42
    assert 'instance_cooldown' not in conf.loadbalancer
