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

"""Phase 2 of a cycle: one step of everything earlier cycles started.

Before a cycle decides anything new it moves on what is under way, on what
phase 1 (``observe``) read: admin wake tests, scale requests, every host in
a power transition or maintenance (``lifecycle``), the migrations the
orchestrator started (``settle``), and the aggregates' overcommit ratios
into placement. It hands phase 3 the same ``Raw`` with the hosts whose step
failed added to ``raw.faulty`` (they sit this cycle out), and the cycle's
``Budget``, which the lifecycle's evacuations and phase 6's actions share.
doc/source/architecture.md shows the phases.
"""

from oslo_log import log as logging

from nova_drs import exception
from nova_drs.daemon import budget as budget_mod
from nova_drs.daemon import cloud_view
from nova_drs.daemon import lifecycle as lifecycle_mod
from nova_drs.daemon import observe
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import requests as admin_requests
from nova_drs.observability import metrics
from nova_drs.overcommit import alerts as overcommit_alerts
from nova_drs.overcommit import placement_sync
from nova_drs.scale import executor as scale_executor

LOG = logging.getLogger(__name__)


class Advance:
    """The advance phase of one daemon (``service.LoadBalancer``)."""

    def __init__(self, conf, database, lifecycle, orchestrator, still_leader):
        self.conf = conf
        self.db = database
        self.lifecycle = lifecycle
        self.orchestrator = orchestrator
        self.still_leader = still_leader

    def run(self, raw, nova):
        """Every step of this phase, in order; returns (the cycle's Budget,
        whether anything was under way).

        The budget is counted first, from what observe read: a step below
        may start an evacuation, which spends it. Nothing under way (no
        admin wake test, no scale request, no host in a power transition or
        disabled by DRS, no open move request, at observe or since) means no
        step below changed what observe read: phase 3 then re-reads nothing.
        """
        group = self.conf.loadbalancer
        budget = budget_mod.budget_for(raw, self.orchestrator.limits,
                                       cloud_view.cluster_of_hosts(raw))
        self.lifecycle.budget = budget
        self.lifecycle.compute_nodes = cloud_view.compute_nodes_by_host(raw.hypervisors)
        open_tests = self.wake_tests()
        scales = scale_executor.advance_scale_requests(nova, self.db, self.conf,
                                                       raw.aggregates, raw.hypervisors)
        with metrics.observe_phase('lifecycle'):
            steps, faults = self.lifecycles()
        raw.faulty.update(faults)
        open_moves = self.orchestrator.settle(raw, group.migration_timeout)
        if group.sync_overcommit:
            self.sync_overcommit(raw, nova)
        under_way = bool(open_tests or scales or steps or raw.requests or open_moves)
        return budget, under_way

    def lifecycles(self):
        """One lifecycle step for every host in a power transition (one query).

        Returns (the number of hosts stepped, {host: observe.HostFault}): a
        step that failed for one host (nova answered one of its requests with
        an error, a power driver or the database failed) takes that host out
        of this cycle and the other hosts' steps go on; it is retried next
        cycle. Only nova not answering at all stops the cycle.
        """
        faults, steps = {}, 0
        records = drs_hosts.list_with_power(self.db, busy_only=True)
        self.lifecycle.targets.retain({r['host'] for r in records
                                       if r['suspend_state'] == drs_hosts.SUSPENDING})
        for record in records:
            busy = record['suspend_state'] in lifecycle_mod.ADVANCING
            if not (busy or record['disabled_by_drs']
                    and record['suspend_state'] == drs_hosts.ACTIVE):
                continue
            if not self.still_leader():
                return steps, faults
            host = record['host']
            steps += 1
            try:
                self.lifecycle.advance(record)
            except (exception.NovaRequestFailed, exception.NovaUnavailable) as exc:
                if exc.status is None:
                    raise
                LOG.warning('%s: lifecycle step failed, host left out of this cycle: %s',
                            host, exc)
                faults[host] = observe.HostFault('nova_error', 'lifecycle step (%s): %s'
                                                 % (record['suspend_state'], exc))
            except Exception as exc:
                LOG.exception('%s: lifecycle step failed, host left out of this cycle',
                              host)
                faults[host] = observe.HostFault('lifecycle_error', 'lifecycle step (%s): %s'
                                                 % (record['suspend_state'], exc))
        self.lifecycle.close_abandoned_evacuations()
        return steps, faults

    def wake_tests(self):
        """Admin wake tests: suspend + wake round trip, one phase per cycle.

        The request's ``result`` carries the phase, so a restarted daemon
        picks the test up where it was. Returns how many were open.
        """
        tests = admin_requests.open_requests(self.db, 'wake_test')
        for request in tests:
            record = drs_hosts.get(self.db, request['host'])
            if record is None:
                admin_requests.update(self.db, request['id'], request['status'], 'failed',
                                      'unknown host')
                continue
            state = record['suspend_state']
            if request['status'] == 'pending':
                if state != drs_hosts.ACTIVE:
                    admin_requests.update(self.db, request['id'], 'pending', 'failed',
                                          'host is %s, not active' % state)
                elif drs_hosts.transition(self.db, request['host'], drs_hosts.ACTIVE,
                                          drs_hosts.SUSPENDING, 'wake test %d' % request['id']):
                    admin_requests.update(self.db, request['id'], 'pending', 'running',
                                          'suspending')
            elif state == drs_hosts.SUSPENDED:
                if drs_hosts.transition(self.db, request['host'], drs_hosts.SUSPENDED,
                                        drs_hosts.WAKING, 'wake test %d' % request['id']):
                    admin_requests.update(self.db, request['id'], 'running', 'running',
                                          'waking')
            elif state == drs_hosts.ERROR:
                admin_requests.update(self.db, request['id'], 'running', 'failed',
                                      record['state_reason'])
            elif state == drs_hosts.ACTIVE:
                passed = request['result'] == 'waking'
                admin_requests.update(
                    self.db, request['id'], 'running', 'done' if passed else 'failed',
                    'suspended and woke up' if passed else
                    'suspend abandoned: %s' % record['state_reason'])
        return len(tests)

    def sync_overcommit(self, raw, nova):
        """Aggregate ratios into placement, so hosts added later get them too.

        Reuses the inventories observe read this cycle: placement is only
        asked again for what must change. Hosts left out of the cycle by a
        fault of their own (no resource provider) are left out here too.
        """
        nodes = {}
        for hypervisor in raw.hypervisors:
            if hypervisor['service']['host'] in raw.faulty:
                continue
            nodes.setdefault(hypervisor['service']['host'], []).append(
                {'uuid': hypervisor['id'], 'nodename': hypervisor['hypervisor_hostname']})
        aggregates = [{'name': a['name'], 'id': a['id'], 'hosts': a.get('hosts') or [],
                       'metadata': a.get('metadata') or {}} for a in raw.aggregates]
        try:
            result = placement_sync.sync(nova.placement_adapter, self.db, aggregates,
                                         nodes, known=raw.inventories, conf=self.conf)
        except Exception as exc:
            LOG.warning('overcommit sync skipped this cycle: %s', exc)
            return
        for change in result.changes:
            LOG.info('overcommit sync: %s %s allocation_ratio %s -> %s (aggregate %s)',
                     change.host, change.resource_class, change.old, change.new,
                     change.aggregates)
        for warning in result.warnings:
            LOG.warning('overcommit sync: %s', warning)
        for over in result.exceeded:
            overcommit_alerts.alert(self.conf, over.host, over.resource, over.capacity,
                                    'nova-drs.loadbalancer')
