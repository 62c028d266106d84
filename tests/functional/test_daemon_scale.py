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

"""The daemon at cloud scale, on real nova: complete views whatever nova pages.

nova pages os-hypervisors, servers, os-migrations, os-server-groups and
flavors at ``[api] max_limit``; the daemon must follow every page. With
``max_limit = 2`` a cloud of 4 computes, 8 servers and 3 server groups spans
several pages of everything.
"""

from nova import context as nova_context
from nova import objects
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs.daemon import cloud_view
from nova_drs.daemon import service
from nova_drs.db import models
from nova_drs.loadbalancer import catalog
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle


class TestCompleteViews(test_daemon_cycle.DaemonTestBase):
    COMPUTE_HOSTS = ('host1', 'host2', 'host3', 'host4')
    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS, ('api', 'max_limit'): '2'}

    def _server(self, name, host, group=None):
        body = self._build_server(name=name, host=host, networks='none')
        request = {'server': body}
        if group:
            request['os:scheduler_hints'] = {'group': group['id']}
        server = self.api.post_server(request)
        return self._wait_for_state_change(server, 'ACTIVE')

    def _group(self, name, policy):
        return self.api.post_server_groups({'name': name, 'policy': policy})

    def _nova_migration(self, server, source, dest, status):
        """A migration record nova holds for ``server`` (queued/running ones
        cannot be paused mid-flight with the fake driver)."""
        ctxt = nova_context.get_admin_context()
        with nova_context.target_cell(ctxt, self.cell_mappings['cell1']) as cctxt:
            nodes = {host: objects.ComputeNodeList.get_all_by_host(cctxt, host)[0]
                     for host in (source, dest)}
            migration = objects.Migration(
                cctxt, uuid=uuidutils.generate_uuid(), instance_uuid=server['id'],
                source_compute=source, dest_compute=dest,
                source_node=nodes[source].hypervisor_hostname,
                dest_node=nodes[dest].hypervisor_hostname, dest_compute_id=nodes[dest].id,
                dest_host='127.0.0.1', status=status, project_id=server['tenant_id'],
                user_id=server['user_id'],
                migration_type='live-migration', old_instance_type_id=1,
                new_instance_type_id=1)
            migration.create()

    def _cloud(self):
        groups = {name: self._group(name, policy) for name, policy in (
            ('affinity', 'affinity'), ('anti-affinity', 'anti-affinity'),
            ('second-anti-affinity', 'anti-affinity'))}
        layout = [('aff1', 'host1', 'affinity'), ('aff2', 'host1', 'affinity'),
                  ('anti1', 'host2', 'anti-affinity'), ('anti2', 'host3', 'anti-affinity'),
                  ('soft1', 'host2', 'second-anti-affinity'),
                  ('soft2', 'host3', 'second-anti-affinity'),
                  ('free1', 'host4', None), ('free2', 'host3', None)]
        servers = {name: self._server(name, host, groups[policy] if policy else None)
                   for name, host, policy in layout}
        self._migrate_server(servers['free2'], host='host2')   # finished, unconfirmed
        self._nova_migration(servers['anti1'], 'host2', 'host1', 'queued')
        self._nova_migration(servers['soft2'], 'host3', 'host1', 'running')
        load = {s['id']: (self.server_host(s['id']), 5.0 if s is servers['free1'] else 20.0)
                for s in servers.values()}
        daemon_support.record_load(
            self.drs_db, {'host1': 30.0, 'host2': 20.0, 'host3': 20.0, 'host4': 2.0}, load)
        return groups, servers

    def _balancer(self):
        return service.LoadBalancer(drs_conf.CONF, self.nova, self.drs_db,
                                    catalog.by_name(self.POLICY), self.power)

    def _view(self):
        balancer = self._balancer()
        raw = balancer.observer.fetch(register_hosts=False)
        return cloud_view.build_view(raw, balancer._rules(), drs_conf.CONF.loadbalancer
                                  .stats_max_age)

    def test_every_page_is_read_and_the_plan_does_not_depend_on_max_limit(self):
        groups, servers = self._cloud()
        view = self._view()
        snapshot = view.snapshot
        self.assertEqual(['host1', 'host2', 'host3', 'host4'],
                         sorted(h.name for h in snapshot.hosts))
        by_uuid = {i.uuid: i for i in snapshot.instances}
        self.assertEqual({s['id'] for s in servers.values()}, set(by_uuid))
        for name, server in servers.items():
            instance = by_uuid[server['id']]
            if name.startswith('free'):
                self.assertIsNone(instance.server_group)
                continue
            group = groups[{'aff': 'affinity', 'ant': 'anti-affinity',
                            'sof': 'second-anti-affinity'}[name[:3]]]
            self.assertEqual((group['id'], group['policy']),
                             (instance.server_group, instance.group_policy), name)
        self.assertEqual(
            {(servers['free2']['id'], 'host3', 'host2'),
             (servers['anti1']['id'], 'host2', 'host1'),
             (servers['soft2']['id'], 'host3', 'host1')},
            {(m.instance, m.source, m.destination) for m in snapshot.migrations})
        plan_at_two = self._balancer().run_cycle(dry_run=True)

        self.flags(max_limit=1000, group='api')
        complete = self._view().snapshot
        self.assertEqual(set(snapshot.hosts), set(complete.hosts))
        self.assertEqual(set(snapshot.instances), set(complete.instances))
        self.assertEqual(set(snapshot.migrations), set(complete.migrations))
        plan_at_default = self._balancer().run_cycle(dry_run=True)
        self.assertIn(('suspend', 'host4'),
                      [(a.kind, a.host) for a in plan_at_two['actions']], plan_at_two)
        self.assertEqual(plan_at_default, plan_at_two)
        with self.drs_db.reader() as session:
            self.assertEqual(0, session.scalar(
                sa.select(sa.func.count()).select_from(models.DrsHost)))


class TestDryRunWritesNothing(test_daemon_cycle.DaemonTestBase):
    """``--dry-run`` promises to change nothing: no INSERT, UPDATE or DELETE."""

    def _writes_during(self, function):
        writes = []

        def listen(conn, cursor, statement, parameters, context, executemany):
            if statement.lstrip().split(None, 1)[0].upper() in ('INSERT', 'UPDATE',
                                                                 'DELETE', 'REPLACE'):
                writes.append(statement)

        engine = self.drs_db.engine
        sa.event.listen(engine, 'before_cursor_execute', listen)
        try:
            result = function()
        finally:
            sa.event.remove(engine, 'before_cursor_execute', listen)
        return result, writes

    def _balancer(self):
        return service.LoadBalancer(drs_conf.CONF, self.nova, self.drs_db,
                                    catalog.by_name(self.POLICY), self.power)

    def test_dry_run_on_a_new_database(self):
        self.quiet_host1()
        summary, writes = self._writes_during(
            lambda: self._balancer().run_cycle(dry_run=True))
        self.assertEqual([], writes)
        self.assertIn('suspend', [a.kind for a in summary['actions']], summary)
        with self.drs_db.reader() as session:
            self.assertEqual(0, session.scalar(
                sa.select(sa.func.count()).select_from(models.DrsHost)))

    def test_dry_run_on_a_populated_database(self):
        self.quiet_host1()
        self.admin_api.post_aggregate_action(
            self.admin_api.api_get('/os-aggregates').body['aggregates'][0]['id'],
            {'set_metadata': {'metadata': {'cpu_allocation_ratio': '2.0'}}})
        self._balancer().run_cycle()            # hosts recorded, ratios synced, acted
        with self.drs_db.reader() as session:
            self.assertEqual(3, session.scalar(
                sa.select(sa.func.count()).select_from(models.DrsHost)))
        summary, writes = self._writes_during(
            lambda: self._balancer().run_cycle(dry_run=True))
        self.assertEqual([], writes)
        self.assertNotIn('skipped', summary)


class TestIncrementalObserve(test_daemon_cycle.DaemonTestBase):
    """After the first cycle only changes are read: changes-since and generations."""

    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('loadbalancer', 'full_refresh_cycles'): '3'}

    def test_changes_since_and_provider_generations(self):
        keep = self._create_server(name='keep', host='host1', networks='none')
        gone = self._create_server(name='gone', host='host2', networks='none')
        observer = self.balancer.observer
        read = []
        body_of = self.nova.provider_inventory_body

        def counted(uuid):
            read.append(uuid)
            return body_of(uuid)

        self.nova.provider_inventory_body = counted
        first = observer.fetch(register_hosts=False)
        self.assertEqual('full', observer.inventory.last_refresh)
        self.assertEqual({keep['id'], gone['id']}, set(first.servers))
        self.assertEqual(3, len(read))

        self._delete_server(gone)
        new = self._create_server(name='new', host='host3', networks='none')
        del read[:]
        second = observer.fetch(register_hosts=False)
        self.assertEqual('incremental', observer.inventory.last_refresh)
        self.assertEqual({keep['id'], new['id']}, set(second.servers))
        # The allocation made on host3 moved its provider's generation (placement
        # does not bump it when allocations are deleted); host1's did not move.
        by_host = {h['service']['host']: h['id'] for h in second.hypervisors}
        self.assertIn(by_host['host3'], read)
        self.assertNotIn(by_host['host1'], read)
        self.assertEqual('host3', second.servers[new['id']]['OS-EXT-SRV-ATTR:host'])

        third = observer.fetch(register_hosts=False)
        self.assertEqual('incremental', observer.inventory.last_refresh)
        # The re-read after the lifecycle steps leaves the periodic re-list to fetch.
        observer.reread_after_act(third)
        self.assertEqual('incremental', observer.inventory.last_refresh)
        observer.fetch(register_hosts=False)
        self.assertEqual('full', observer.inventory.last_refresh)   # cycles 1, 4, 7...
