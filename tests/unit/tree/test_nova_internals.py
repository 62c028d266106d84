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

"""Every nova internal nova-drs relies on (README "Nova internals used").

None of these is a documented plugin interface; each assertion names the use
so a nova upgrade that changes one fails here, loudly, before it fails in a
cloud.
"""

import inspect
import re

import pytest


def params(func):
    return list(inspect.signature(func).parameters)


def test_db_main_api_compute_node_reads():
    # nova_drs/api/nova_hosts.py: host listing of the /loadbalancer API reads
    # compute nodes of each cell without loading full ComputeNode objects.
    from nova.db.main import api
    assert params(api.compute_node_get_all)[:1] == ['context']
    assert params(api.compute_node_get_all_by_host)[:2] == ['context', 'host']


def test_policy_module_enforcer_global():
    # nova_drs/api/rbac.py registers our rules into nova's enforcer.
    from nova import policy
    from oslo_policy import policy as oslo_policy
    assert hasattr(policy, '_ENFORCER')
    assert 'global _ENFORCER' in inspect.getsource(policy.init)
    # The module global is assigned the Enforcer inside init(): nova 34 builds
    # it in a local first (``_ENFORCER = enforcer``), 32 and 33 in place
    # (``_ENFORCER = policy.Enforcer(``); the same contract.
    assert re.search(r'_ENFORCER = (enforcer\b|policy\.Enforcer\()',
                     inspect.getsource(policy.init))
    assert hasattr(oslo_policy.Enforcer, 'register_defaults')


def test_virt_driver_monitor_data_and_constructor():
    # nova_drs/resources/monitor.py subclasses it and reads self._data.
    from nova.compute.monitors.cpu import virt_driver
    assert params(virt_driver.Monitor.__init__)[:2] == ['self', 'resource_tracker']
    assert '_data' in inspect.getsource(virt_driver.Monitor.__init__)
    assert params(virt_driver.Monitor.populate_metrics)[:2] == ['self', 'metric_list']


def test_resource_tracker_attributes_the_monitor_uses():
    # The monitor writes ResourceTracker.stats[nodename] and reads
    # compute_nodes, host and driver.
    from nova.compute import resource_tracker
    init = inspect.getsource(resource_tracker.ResourceTracker.__init__)
    for attribute in ('self.stats', 'self.compute_nodes', 'self.host', 'self.driver',
                      'self.monitors'):
        assert attribute in init, attribute


def test_monitor_alias_package_exists():
    # etc/nova-drs/nova_drs-monitor.pth aliases nova.compute.monitors.cpu.drs:
    # nova's monitor loader only accepts modules under that package.
    from nova.compute import monitors
    import nova.compute.monitors.cpu as cpu_monitors
    assert cpu_monitors.__name__ == 'nova.compute.monitors.cpu'
    assert 'nova.compute.monitors.' in inspect.getsource(monitors.MonitorHandler)


def test_context_cell_helpers():
    # scheduling/migrations.py, overcommit/nova_view.py, consumers/compute_units.py.
    from nova import context
    assert params(context.scatter_gather_skip_cell0)[:2] == ['context', 'fn']
    assert params(context.target_cell)[:2] == ['context', 'cell_mapping']
    assert hasattr(context, 'did_not_respond_sentinel')


def test_compute_api_get():
    # nova_drs/scale/api.py loads the server through nova's compute API class.
    from nova.compute import api
    assert params(api.API.get)[:3] == ['self', 'context', 'instance_id']


def test_rpc_legacy_notifier_and_notifications_options():
    # overcommit/alerts.py sends through nova's notifier inside nova services;
    # stats/collector.py reads nova's [notifications] options.
    from nova import rpc
    from nova.conf import notifications
    assert hasattr(rpc, 'LEGACY_NOTIFIER')
    names = {opt.name for opt in notifications.ALL_OPTS}
    assert {'notification_format', 'versioned_notifications_topics'} <= names


def test_db_configure_for_manage():
    # overcommit/nova_databases.py sets nova's databases up like nova-manage.
    from nova.db.api import api as api_db
    from nova.db.main import api as main_db
    assert params(main_db.configure)[:1] == ['conf']
    assert params(api_db.configure)[:1] == ['conf']


def test_sdk_placement_adapter_for_manage():
    # cmd/manage_overcommit.py reaches placement with nova's [placement]
    # credentials, through the SDK proxy nova's report client uses.
    from nova import utils
    assert params(utils.get_sdk_adapter)[:2] == ['service_type', 'admin']


@pytest.mark.parametrize('name', ['AggregateList', 'ComputeNodeList', 'InstanceList',
                                  'MigrationList', 'HostMapping', 'CellMapping', 'Flavor'])
def test_versioned_objects_used(name):
    from nova import objects
    objects.register_all()
    assert hasattr(objects, name), name


def test_soft_affinity_needs_the_literal_all_weighers_name():
    # etc/nova-drs/nova.conf.drs lists nova.scheduler.weights.all_weighers by
    # name next to nova_drs.weights.drs_weighers: nova enables the soft
    # server-group policies only when weight_classes holds that string.
    from nova.scheduler import utils as scheduler_utils
    source = inspect.getsource(scheduler_utils.validate_weigher)
    assert "'nova.scheduler.weights.all_weighers' in weight_classes" in source
    assert "validate_weigher(\n            'nova.scheduler.weights.affinity." in (
        inspect.getsource(scheduler_utils._get_group_details))


def _before(source, first, then):
    assert first in source and then in source, (first, then)
    return source.index(first) < source.index(then)


def test_a_move_has_its_migration_record_before_it_is_scheduled():
    # filters/migration_limit.py: a request is a move when its server has an
    # in-progress migration record (nova writes it before asking the
    # scheduler), and only a request with ignore_hosts or
    # requested_destination.cell can be one (a boot sets neither).
    from nova import objects
    from nova.compute import api
    from nova.conductor import manager
    from nova.conductor.tasks import live_migrate
    from nova.conductor.tasks import migrate
    objects.register_all()
    assert {'ignore_hosts', 'requested_destination', 'instance_uuid'} <= set(
        objects.RequestSpec.fields)
    assert 'cell' in objects.Destination.fields
    assert _before(inspect.getsource(manager.ComputeTaskManager._live_migrate),
                   'migration.create()', 'task.execute()')
    execute = inspect.getsource(migrate.MigrationTask._execute)
    assert _before(execute, 'self._preallocate_migration()', 'self._schedule()')
    assert _before(execute, 'self._set_requested_destination_cell(', 'self._schedule()')
    assert _before(inspect.getsource(api.API.evacuate), 'migration.create()',
                   'rebuild_instance(')
    find = inspect.getsource(live_migrate.LiveMigrationTask._find_destination)
    assert 'attempted_hosts = [self.source]' in find
    assert 'request_spec.ignore_hosts = attempted_hosts' in find
    assert 'requested_destination.cell' in inspect.getsource(
        manager.ComputeTaskManager._restrict_request_spec_to_cell)
