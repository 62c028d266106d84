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

"""Cost of the nova-drs scheduler plugins in nova's filter + weigher pass.

    .venv/bin/python benchmarks/scheduler_overhead.py [--hosts 1000] [--requests 20]
        [--repeat 5] [--cache-seconds 5]

Builds --hosts synthetic nova HostStates (10 vCPUs/8 GB used of 32 vCPUs /
128 GB, four aggregates carrying ratios and drs_policy metadata), a DRS
database in SQLite (every host known, 10 % suspended, 10 recorded instances
per host) and nova API/cell databases in SQLite (one cell, 20 migrations in
progress) so every plugin does its real queries. Then times nova's
HostFilterHandler + HostWeightHandler for one scheduling request:

* nova:     nova's default enabled_filters + nova.scheduler.weights.all_weighers
* nova-drs: the same + SuspendStateFilter, OvercommitCoreFilter,
            OvercommitRamFilter + PowerSavingWeigher, EvenDistributionWeigher,
            MigrationWeigher (each request a new RequestSpec, so the plugins'
            once-per-request database reads are included)

--cache-seconds sets [drs_scheduler] cache_seconds (default 5, as shipped);
0 makes every request re-read the deployed-with ratios and migrations.
Prints the best-of-N mean time per request of both and the ratio.
"""

import argparse
import datetime
import logging
import sys
import tempfile
import time

from oslo_utils import uuidutils


def _configure(workdir):
    from nova import config  # noqa: F401  (registers nova's options)
    from nova import objects
    import nova.conf
    import oslo_messaging

    from nova_drs import conf as drs_conf

    conf = nova.conf.CONF
    conf([], project='nova', default_config_files=[])
    oslo_messaging.get_rpc_transport(conf, url='fake:///')  # registers transport_url
    conf.set_override('connection', 'sqlite:///%s/api.sqlite' % workdir, 'api_database')
    conf.set_override('connection', 'sqlite:///%s/cell1.sqlite' % workdir, 'database')
    conf.set_override('connection', 'sqlite:///%s/drs.sqlite' % workdir, 'drs_database')
    conf.set_override('service_down_time', 86400)  # setup time must not age the services
    drs_conf.validate(conf)
    objects.register_all()
    return conf


def _nova_databases(conf, n_migrations, hosts):
    from nova import context as nova_context
    from nova import objects
    from nova.db import migration as nova_migration
    from nova.db.api import api as api_db_api
    from nova.db.main import api as main_db_api

    main_db_api.configure(conf)
    api_db_api.configure(conf)
    nova_migration.db_sync(database='api')
    nova_migration.db_sync(database='main')
    ctxt = nova_context.get_admin_context()
    cell = objects.CellMapping(ctxt, uuid=uuidutils.generate_uuid(), name='cell1',
                               transport_url='none:///',
                               database_connection=conf.database.connection)
    cell.create()
    with nova_context.target_cell(ctxt, cell) as cctxt:
        for index in range(n_migrations):
            objects.Migration(cctxt, source_compute=hosts[index], dest_compute=hosts[-index - 1],
                              status='running', migration_type='live-migration',
                              instance_uuid=uuidutils.generate_uuid()).create()


def _drs_database(conf, hosts, per_host):
    from nova_drs.db import api as db_api
    from nova_drs.db import hosts as drs_hosts
    from nova_drs.db import migration
    from nova_drs.db import models

    database = db_api.shared_database(conf)
    migration.sync(database)
    with database.writer() as session:
        session.add_all(models.DrsHost(
            host=host, suspend_state=drs_hosts.SUSPENDED if index % 10 == 0 else
            drs_hosts.ACTIVE, state_version=0, wake_failed=False)
            for index, host in enumerate(hosts))
        session.add_all(models.InstanceOvercommit(
            instance_uuid='%s-vm%02d' % (host, vm), host=host, vcpus=1, memory_mb=800,
            cpu_allocation_ratio=(1.0, 2.0, 4.0)[vm % 3], ram_allocation_ratio=1.0,
            recorded_by='bench') for host in hosts for vm in range(per_host))


def _host_states(n_hosts):
    from nova import objects
    from nova.scheduler import host_manager

    aggregates = [
        objects.Aggregate(id=1, name='gold', hosts=[], metadata={
            'cpu_allocation_ratio': '1.0', 'drs_policy': 'power_saving'}),
        objects.Aggregate(id=2, name='silver', hosts=[], metadata={
            'cpu_allocation_ratio': '4.0', 'ram_allocation_ratio': '1.5',
            'drs_policy': 'even_distribution'}),
        objects.Aggregate(id=3, name='bronze', hosts=[], metadata={
            'cpu_allocation_ratio': 'abc'}),
        objects.Aggregate(id=4, name='plain', hosts=[], metadata={}),
    ]
    now = datetime.datetime.now(datetime.timezone.utc)
    states = []
    for index in range(n_hosts):
        name = 'host-%05d' % index
        state = host_manager.HostState(name, name, 'cell1')
        state.vcpus_total, state.vcpus_used = 32, 10
        state.total_usable_ram_mb, state.free_ram_mb = 131072, 131072 - 8192
        state.total_usable_disk_gb, state.free_disk_mb = 1000, 900 * 1024
        state.cpu_allocation_ratio, state.ram_allocation_ratio = 4.0, 1.0
        state.disk_allocation_ratio = 1.0
        state.aggregates = [aggregates[index % len(aggregates)]]
        state.stats = ({'drs_cpu_used_percent': str(index % 90), 'drs_memory_used_mb': '9000',
                        'drs_memory_total_mb': '131072'} if index % 2 else {})
        state.supported_instances = []
        state.service = {'id': index, 'host': name, 'binary': 'nova-compute',
                         'disabled': False, 'forced_down': False, 'last_seen_up': now,
                         'updated_at': now, 'created_at': now}
        state.uuid = uuidutils.generate_uuid()
        state.updated = now
        states.append(state)
    return states


def _request_spec():
    from nova import objects

    return objects.RequestSpec(
        flavor=objects.Flavor(vcpus=1, memory_mb=512, root_gb=1, ephemeral_gb=0, swap=0,
                              extra_specs={}),
        image=objects.ImageMeta.from_dict({'properties': {}}),
        num_instances=1, instance_uuid=uuidutils.generate_uuid(), scheduler_hints={},
        instance_group=None, ignore_hosts=None, force_hosts=None, force_nodes=None,
        project_id='p', user_id='u', is_bfv=False)


def _plugins():
    from nova.conf import scheduler as nova_scheduler_conf
    from nova.scheduler import filters as nova_filters
    from nova.scheduler import weights as nova_weights

    from nova_drs import filters as drs_filters
    from nova_drs import weights as drs_weights

    enabled = next(opt for opt in nova_scheduler_conf.filter_scheduler_opts
                   if opt.name == 'enabled_filters').default
    by_name = {cls.__name__: cls for cls in nova_filters.all_filters()}
    nova_filter_objs = [by_name[name]() for name in enabled]
    nova_weighers = [cls() for cls in nova_weights.all_weighers()]
    drs_filter_objs = nova_filter_objs + [
        drs_filters.SuspendStateFilter(), drs_filters.OvercommitCoreFilter(),
        drs_filters.OvercommitRamFilter()]
    drs_weighers = nova_weighers + [
        drs_weights.PowerSavingWeigher(), drs_weights.EvenDistributionWeigher(),
        drs_weights.MigrationWeigher()]
    return (nova_filter_objs, nova_weighers), (drs_filter_objs, drs_weighers)


def _time_pass(plugins, states, n_requests):
    from nova.scheduler import filters as nova_filters
    from nova.scheduler import weights as nova_weights

    filter_handler = nova_filters.HostFilterHandler()
    weight_handler = nova_weights.HostWeightHandler()
    filters, weighers = plugins
    start = time.perf_counter()
    for _ in range(n_requests):
        spec = _request_spec()
        passed = filter_handler.get_filtered_objects(filters, states, spec, 0)
        weighed = weight_handler.get_weighed_objects(weighers, passed, spec)
    return (time.perf_counter() - start) / n_requests, len(passed), weighed[0].obj.host


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hosts', type=int, default=1000)
    parser.add_argument('--requests', type=int, default=20)
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--cache-seconds', type=int, default=5)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)

    workdir = tempfile.mkdtemp(prefix='nova-drs-bench-')
    conf = _configure(workdir)
    conf.set_override('cache_seconds', args.cache_seconds, 'drs_scheduler')
    states = _host_states(args.hosts)
    names = [state.host for state in states]
    _nova_databases(conf, 20, names)
    _drs_database(conf, names, per_host=10)
    nova_plugins, drs_plugins = _plugins()

    best = {'nova': float('inf'), 'nova-drs': float('inf')}
    results = {}
    _time_pass(drs_plugins, states, 1)  # warm-up: imports, connections
    _time_pass(nova_plugins, states, 1)
    for _ in range(args.repeat):
        for label, plugins in (('nova', nova_plugins), ('nova-drs', drs_plugins)):
            elapsed, passed, chosen = _time_pass(plugins, states, args.requests)
            best[label] = min(best[label], elapsed)
            results[label] = (passed, chosen)
    print('%d HostStates, %d requests x best of %d, [drs_scheduler] cache_seconds = %d'
          % (args.hosts, args.requests, args.repeat, args.cache_seconds))
    for label in ('nova', 'nova-drs'):
        print('%-9s %8.2f ms per request  (%d hosts passed, best %s)'
              % (label, best[label] * 1000, *results[label]))
    ratio = best['nova-drs'] / best['nova']
    print('ratio     %8.2f  (target <= 1.20: %s)' % (ratio, 'met' if ratio <= 1.20 else
                                                    'NOT met'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
