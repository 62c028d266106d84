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

"""One nova-loadbalancer cycle in seven phases: observe, advance what is
under way (advance.py), re-read what that changed, build the view, decide,
act, record (doc/source/architecture.md shows what each hands the next).

Everything that changes the cloud is persisted first (DRS database) and
re-checked against nova; a cycle that cannot read a listing whole does
nothing at all, while a fault of one host only leaves that host out of the
cycle (``observe.HostFault``).
"""

import datetime
import itertools

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from nova_drs import cluster_policy
from nova_drs import exception
from nova_drs.daemon import advance
from nova_drs.daemon import cloud_view
from nova_drs.daemon import evacuation
from nova_drs.daemon import explain
from nova_drs.daemon import history_purge
from nova_drs.daemon import lifecycle as lifecycle_mod
from nova_drs.daemon import measure
from nova_drs.daemon import observe
from nova_drs.daemon import orchestrator as orchestrator_mod
from nova_drs.daemon import oscillation
from nova_drs.daemon import plan_recovery
from nova_drs.daemon import planning
from nova_drs.db import cycle_inventory
from nova_drs.db import decisions
from nova_drs.db import inventory
from nova_drs.db import plan_progress
from nova_drs.db import plans
from nova_drs.db import rules as db_rules
from nova_drs.observability import metrics

LOG = logging.getLogger(__name__)


class LoadBalancer:
    """The daemon's cycle, with every dependency handed in (tests build it too)."""

    def __init__(self, conf, nova, database, policy, power_drivers, coordinator=None,
                 crash_point=None):
        self.conf = conf
        self.nova = nova
        self.db = database
        self.policy = policy
        self.power_drivers = power_drivers
        self.coordinator = coordinator
        group = conf.loadbalancer
        targets = evacuation.Targets()  # a suspend's plan: orchestrator -> lifecycle
        self.lifecycle = lifecycle_mod.HostLifecycle(
            nova, database, power_drivers, suspend_timeout=group.suspend_timeout,
            wake_timeout=group.wake_timeout, migration_timeout=group.migration_timeout,
            crash_point=crash_point, targets=targets)
        self.orchestrator = orchestrator_mod.Orchestrator(
            nova, database,
            limits=_limits(group),
            migration_cooldown=group.migration_cooldown, still_leader=self._still_leader,
            floor_of=self._floor, targets=targets)
        self.advance = advance.Advance(conf, database, self.lifecycle, self.orchestrator,
                                       self._still_leader)
        self.resolver = cluster_policy.Resolver()
        self.planner = planning.ClusterPlanner(conf, policy, self.resolver)
        self.observer = self._observer()
        self.power_meter = measure.PowerMeter(conf, database, power_drivers)
        self.history_purge = history_purge.DaemonPurge(conf, database)
        # This process, in the term claims record: a daemon restarted with the
        # same member id and term is a new term too.
        self.incarnation = uuidutils.generate_uuid()

    def _observer(self):
        """The observer keeps the cloud's inventory between cycles (per nova client)."""
        group = self.conf.loadbalancer
        return observe.Observer(
            self.nova, self.db, self.power_drivers, group.history_length,
            group.stats_max_age, group.host_cooldown,
            full_refresh_cycles=group.full_refresh_cycles,
            stats_window=group.stats_max_age + group.history_length * group.period,
            migration_cooldown=group.migration_cooldown,
            oscillation=(self.conf.drs_oscillation.max_moves_per_server,
                         self.conf.drs_oscillation.oscillation_window))

    def _still_leader(self):
        return self.coordinator is None or self.coordinator.still_leader()

    def _term(self):
        """The leadership term this daemon claims plan actions in (db.plan_progress.claim);
        None once it lost the lead (it then claims nothing: ``_leading``)."""
        if self.coordinator is None:
            return self.incarnation
        try:
            return '%s/%s' % (self.coordinator.fence_token(), self.incarnation)
        except exception.NotLeader:
            return None

    def _rules(self):
        return cloud_view.Rules([{'id': r['id'], 'type': r['type'], 'value': r['value'],
                               'allow': r['allow']}
                              for r in db_rules.list_all(self.db)])

    def run_cycle(self, dry_run=False):
        """One cycle; returns a summary dict (also what --dry-run prints).

        nova and placement are read once (incrementally after the first
        cycle); after the lifecycle steps only what they change is re-read,
        and nothing when nothing was under way.
        A dry run writes nothing, not even the records of unknown hosts.
        """
        if self.coordinator is not None and not self.coordinator.is_leader():
            return {'role': 'standby'}
        group = self.conf.loadbalancer
        rules = self._rules()
        if self.observer.nova is not self.nova:
            self.observer = self._observer()
        try:
            raw, budget = self._read(dry_run)
            view = cloud_view.build_view(raw, rules, group.stats_max_age)
        except exception.NovaUnavailable as exc:
            # A listing that could not be read whole (one host's faults never
            # get here): re-list everything next cycle.
            self.observer.inventory.invalidate()
            LOG.error('cycle skipped, nothing done: %s', exc)
            return {'skipped': str(exc)}
        metrics.note_view(view)
        metrics.count_host_faults(fault.kind for fault in raw.faulty.values())
        record = explain.Decisions()
        actions, planned, held = self._decide(view, raw, record)
        summary = {'actions': actions, 'stale_hosts': list(view.stale_hosts), 'held': held,
                   'faulty_hosts': {host: str(fault) for host, fault in raw.faulty.items()}}
        if dry_run:
            return summary
        with metrics.observe_phase('act'):
            summary.update(self._act(actions, view, budget, record, decided_at=raw.now))
        self._record(raw, view, planned, actions, record, held)
        return summary

    def _read(self, dry_run):
        """Phases 1 to 3: observe, advance what is under way, re-read what that
        may have changed (nothing when nothing was under way: an idle cycle
        lists nova's services once). Returns the Raw and the cycle's Budget
        (None in a dry run, which advances nothing and writes nothing)."""
        with metrics.observe_phase('observe'):
            raw = self.observer.fetch(register_hosts=not dry_run)
        budget = None
        if not dry_run:
            budget, under_way = self.advance.run(raw, self.nova)
            if under_way:
                raw = self.observer.reread_after_act(raw)
        raw.evacuation_targets = self.lifecycle.targets.pending()
        return raw, budget

    def _decide(self, view, raw, record):
        """Phase 5: each cluster's plan from the core, less the moves of servers
        the oscillation guard holds. Returns (actions, planned, held)."""
        with metrics.observe_phase('plan'):
            planned = self.planner.plan(view, record)
        guard = self.conf.drs_oscillation
        actions, held = oscillation.hold(
            self.db, planned, {i.uuid: i.host for i in view.snapshot.instances},
            guard.max_moves_per_server, guard.oscillation_window, at_limit=raw.held_servers)
        return actions, planned, held

    def _record(self, raw, view, planned, actions, record, held):
        """Phase 7: what the cycle planned from, why, the BMCs' watts, and the
        history past its retention; none of it undoes what phase 6 did."""
        self._record_inventory(view, planned, raw.now)
        record.evacuations(actions)
        self._store_decisions(record, view, held)
        self._read_power()
        self.history_purge.run(raw.services, raw.records, raw.now)

    def _read_power(self):
        """Power readings of a batch of BMCs: figures only, never cost a cycle."""
        try:
            with metrics.observe_phase('measure'):
                self.power_meter.read()
        except Exception:
            LOG.exception('power readings skipped this cycle')

    def _record_inventory(self, view, actions, now):
        """What this cycle planned from, for ``nova-drs-sim --from-stats``."""
        history = self.observer.history
        try:
            inventory.record(self.db, now, cycle_inventory.body(
                view, actions, cycle_inventory.epoch(now),
                cycle_inventory.epoch(history.start), cycle_inventory.epoch(history.newest),
                history.length))
        except Exception as exc:  # replay data only: never costs a cycle
            LOG.warning('cycle inventory not recorded: %s', exc)

    def _store_decisions(self, record, view, held):
        """This cycle's explanations in one INSERT, older ones pruned in one DELETE.

        They explain what was done; failing to store them does not undo it.
        """
        now = timeutils.utcnow()
        record.refine_excluded(view)
        record.held(held)
        try:
            decisions.save(self.db, record.rows(now))
            decisions.prune(self.db, now, self.conf.loadbalancer.decision_retention)
        except Exception:
            LOG.exception('decisions of this cycle not stored (drs explain)')

    def _act(self, actions, view, budget, record=None, decided_at=None):
        """Execute automatic clusters' actions (planned on what was observed at
        ``decided_at``); store manual ones for approval.

        Approved and executing plans run first, within the same cycle
        ``budget`` as the lifecycle's evacuations and the automatic plan: each
        action's progress is stored (db.plan_progress), so a plan an exception, a
        restart or a failover interrupted is resumed here by whichever daemon
        leads, without sending any action twice. Every plan is saved with its
        cluster. What the orchestrator refuses goes into ``record``.
        """
        record = record or explain.Decisions()
        automatic = [a for a in actions if a.automation == plans.AUTOMATIC]
        manual = [a for a in actions if a.automation == plans.MANUAL]
        summary = {'started': 0, 'deferred': 0, 'pending': len(manual), 'approved_run': 0}
        # Each cluster's pending plan keeps its id while its actions do not
        # change; a changed one (or none) supersedes it.
        plans.offer(self.db, dict(_by_cluster(manual)))
        if manual:
            record.pending(manual)
        term = self._term()
        if term is not None:  # only a leader settles what a previous term left
            plan_recovery.reconcile(self.nova, self.db, term)
        for plan_id, status, pending, decided_at in plans.runnable(self.db):
            if status == 'approved' and not plans.set_status(self.db, plan_id, 'executing',
                                                             'approved'):
                continue
            result = self.orchestrator.execute(pending, view, budget,
                                               plan_progress.Progress(self.db, plan_id, term),
                                               decided_at=decided_at)
            self._count(summary, result)
            record.approved(plan_id, pending, result)
            record.refused(result['skipped'])
            # What the limits deferred (or a lost leadership left) stays
            # pending: the plan stays executing until none is.
            plans.finish_if_complete(self.db, plan_id)
            summary['approved_run'] += 1
        if automatic:
            # Every action is persisted by the orchestrator before it is taken;
            # the plan rows record what this cycle started (bounded by the
            # limits), the rest is re-planned next cycle on fresh data.
            result = self.orchestrator.execute(automatic, view, budget, decided_at=decided_at)
            self._count(summary, result)
            record.refused(result['skipped'])
            for cluster, of_cluster in _by_cluster(result['done']):
                plans.save(self.db, plans.AUTOMATIC, of_cluster, 'done', cluster=cluster)
        self._purge_plans()
        return summary

    def _purge_plans(self):
        """Finished plans older than ``[loadbalancer] plan_retention`` go (0 keeps them)."""
        retention = self.conf.loadbalancer.plan_retention
        if not retention:
            return
        try:
            plans.purge(self.db, timeutils.utcnow() - datetime.timedelta(hours=retention))
        except Exception:
            LOG.exception('old plans not purged this cycle')

    def _floor(self, view, cluster):
        """The floor of active hosts of ``cluster``, as the planner reads it."""
        return self.planner.safety_limits(cluster, view.clusters.get(cluster) or {}).floor

    @staticmethod
    def _count(summary, result):
        summary['started'] += result['started']
        summary['deferred'] += len(result['skipped'])


def _limits(group):
    """The orchestrator's and the cycle budget's limits from ``[loadbalancer]``."""
    return {'per_host': group.max_migrations_per_host,
            'per_destination': group.max_migrations_per_destination,
            'per_cluster': group.max_migrations_per_cluster,
            'suspends_per_cycle': group.max_suspends_per_cycle,
            'wakes_per_cycle': group.max_wakes_per_cycle}


def _by_cluster(actions):
    """[(cluster, its actions in plan order)]: one stored plan per cluster."""
    ordered = sorted(actions, key=lambda action: action.cluster or '')
    return [(cluster, list(group)) for cluster, group in
            itertools.groupby(ordered, key=lambda action: action.cluster)]
