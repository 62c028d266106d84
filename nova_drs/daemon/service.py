"""One nova-loadbalancer cycle: observe -> advance lifecycles -> decide -> act.

Everything that changes the cloud is persisted first (DRS database) and
re-checked against nova; a cycle that cannot see the whole cloud does
nothing at all.
"""

import copy
import dataclasses
import logging

from nova_drs import cluster_policy
from nova_drs import opt_out
from nova_drs.daemon import lifecycle as lifecycle_mod
from nova_drs.daemon import nova_api
from nova_drs.daemon import observe
from nova_drs.daemon import oscillation
from nova_drs.daemon import orchestrator as orchestrator_mod
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import models
from nova_drs.db import plans
from nova_drs.db import requests as admin_requests
from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from nova_drs.observability import metrics
from nova_drs.overcommit import placement_sync
from nova_drs.scale import executor as scale_executor

LOG = logging.getLogger(__name__)



def _opted_in(view, hosts, automation):
    """The instances on ``hosts``; ``manual`` servers (pinned by build_view) may
    move in a manual cluster, where an admin approves the plan."""
    if automation != opt_out.MANUAL:
        return tuple(i for i in view.snapshot.instances if i.host in hosts)
    return tuple(dataclasses.replace(i, movable=True)
                 if view.opt_out.get(i.uuid) == opt_out.MANUAL else i
                 for i in view.snapshot.instances if i.host in hosts)


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
        self.lifecycle = lifecycle_mod.HostLifecycle(
            nova, database, power_drivers, suspend_timeout=group.suspend_timeout,
            wake_timeout=group.wake_timeout, migration_timeout=group.migration_timeout,
            crash_point=crash_point)
        self.orchestrator = orchestrator_mod.Orchestrator(
            nova, database,
            limits={'per_host': group.max_migrations_per_host,
                    'per_destination': group.max_migrations_per_destination,
                    'per_cluster': group.max_migrations_per_cluster,
                    'suspends_per_cycle': group.max_suspends_per_cycle,
                    'wakes_per_cycle': group.max_wakes_per_cycle},
            migration_cooldown=group.migration_cooldown, still_leader=self._still_leader)
        self.resolver = cluster_policy.Resolver()
        self.observer = self._observer()

    def _observer(self):
        """The observer keeps the cloud's inventory between cycles (per nova client)."""
        group = self.conf.loadbalancer
        return observe.Observer(
            self.nova, self.db, self.power_drivers, group.history_length,
            group.stats_max_age, group.host_cooldown,
            full_refresh_cycles=group.full_refresh_cycles,
            stats_window=group.stats_max_age + group.history_length * group.period,
            migration_cooldown=group.migration_cooldown)

    def _still_leader(self):
        return self.coordinator is None or self.coordinator.still_leader()

    def _rules(self):
        with self.db.reader() as session:
            rows = session.query(models.LbRule).order_by(models.LbRule.id).all()
            return observe.Rules([{'type': r.type, 'value': r.value, 'allow': r.allow}
                                  for r in rows])

    def run_cycle(self, dry_run=False):
        """One cycle; returns a summary dict (also what --dry-run prints).

        nova and placement are read once (incrementally after the first
        cycle); after the lifecycle steps only what they change is re-read.
        A dry run writes nothing, not even the records of unknown hosts.
        """
        if self.coordinator is not None and not self.coordinator.is_leader():
            return {'role': 'standby'}
        group = self.conf.loadbalancer
        rules = self._rules()
        if self.observer.nova is not self.nova:
            self.observer = self._observer()
        try:
            with metrics.observe_phase('observe'):
                raw = self.observer.fetch(register_hosts=not dry_run)
            if not dry_run:
                # settle and the sync read servers, hypervisors, aggregates and
                # inventories, which the Raw holds: the view is built once.
                budget = orchestrator_mod.budget_for(
                    raw, self.orchestrator.limits, observe.cluster_of_hosts(raw))
                self.lifecycle.admit = budget.admit_evacuation
                self._wake_tests()
                scale_executor.advance_scale_requests(self.nova, self.db, self.conf)
                with metrics.observe_phase('lifecycle'):
                    self._advance_lifecycles()
                self.orchestrator.settle(raw, group.migration_timeout)
                if group.sync_overcommit:
                    self._sync_overcommit(raw)
                raw = self.observer.reread_after_act(raw)
            view = observe.build_view(raw, rules, group.stats_max_age)
        except nova_api.NovaUnavailable as exc:
            self.observer.inventory.invalidate()
            LOG.error('cycle skipped, nothing done: %s', exc)
            return {'skipped': str(exc)}
        metrics.note_view(view)
        with metrics.observe_phase('plan'):
            actions = self._plan(view)
        guard = self.conf.drs_oscillation
        actions, held = oscillation.hold(
            self.db, actions, {i.uuid: i.host for i in view.snapshot.instances},
            guard.max_moves_per_server, guard.oscillation_window)
        summary = {'actions': actions, 'stale_hosts': list(view.stale_hosts), 'held': held}
        if dry_run:
            return summary
        with metrics.observe_phase('act'):
            summary.update(self._act(actions, view, budget))
        return summary

    def _advance_lifecycles(self):
        """One lifecycle step for every host in a power transition (one query)."""
        for record in drs_hosts.list_with_power(self.db, busy_only=True):
            busy = record['suspend_state'] in lifecycle_mod.ADVANCING
            if not (busy or record['disabled_by_drs']
                    and record['suspend_state'] == drs_hosts.ACTIVE):
                continue
            if not self._still_leader():
                return
            try:
                self.lifecycle.advance(record)
            except nova_api.NovaUnavailable:
                raise
            except Exception:
                LOG.exception('%s: lifecycle step failed; retried next cycle',
                              record['host'])
        self.lifecycle.close_abandoned_evacuations()

    def _wake_tests(self):
        """Admin wake tests: suspend + wake round trip, one phase per cycle.

        The request's ``result`` carries the phase, so a restarted daemon
        picks the test up where it was.
        """
        for request in admin_requests.open_requests(self.db, 'wake_test'):
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

    def _sync_overcommit(self, raw):
        """Aggregate ratios into placement, so hosts added later get them too.

        Reuses the inventories observe read this cycle: placement is only
        asked again for what must change.
        """
        nodes = {}
        for hypervisor in raw.hypervisors:
            nodes.setdefault(hypervisor['service']['host'], []).append(
                {'uuid': hypervisor['id'], 'nodename': hypervisor['hypervisor_hostname']})
        aggregates = [{'name': a['name'], 'id': a['id'], 'hosts': a.get('hosts') or [],
                       'metadata': a.get('metadata') or {}} for a in raw.aggregates]
        try:
            result = placement_sync.sync(self.nova.placement_adapter, self.db, aggregates,
                                         nodes, known=raw.inventories)
        except Exception as exc:
            LOG.warning('overcommit sync skipped this cycle: %s', exc)
            return
        for change in result.changes:
            LOG.info('overcommit sync: %s %s allocation_ratio %s -> %s (aggregate %s)',
                     change.host, change.resource_class, change.old, change.new,
                     change.aggregates)
        for warning in result.warnings:
            LOG.warning('overcommit sync: %s', warning)

    def _plan(self, view):
        """Plan every cluster with its own policy and limits; actions as dicts.

        Each host's policy comes from the shared resolver (as the weighers
        see it); hosts whose policy is ``none`` are neither sources, nor
        destinations, nor suspended.
        """
        group = self.conf.loadbalancer
        aggregates_of = {}
        for aggregate in view.aggregates:
            for name in aggregate.get('hosts') or ():
                aggregates_of.setdefault(name, []).append(
                    (aggregate['name'], aggregate.get('metadata') or {}))
        by_cluster = {}
        for host in view.snapshot.hosts:
            policy_name = self.resolver.host_policy(aggregates_of.get(host.name, ()),
                                                    group.default_policy)
            if policy_name != cluster_policy.NONE:
                by_cluster.setdefault((host.cluster, policy_name), []).append(host)
        actions = []
        for (cluster, policy_name), hosts in sorted(by_cluster.items()):
            meta = view.clusters.get(cluster) or {}
            if cluster_policy.POLICY_KEY not in meta:
                meta = {}  # not a DRS cluster: hosts nobody opted in, global defaults
            names = {h.name for h in hosts}
            automation = self.resolver.automation(cluster, meta, group.automation)
            snapshot = model.Snapshot(
                hosts=tuple(hosts),
                instances=_opted_in(view, names, automation),
                migrations=tuple(m for m in view.snapshot.migrations
                                 if m.source in names and m.destination in names),
                now=view.snapshot.now)
            limits = model.SafetyLimits(
                min_active_hosts=self._int_meta(cluster, meta, 'min_active_hosts',
                                                group.min_active_hosts),
                hosts_in_reserve=self._int_meta(cluster, meta, 'hosts_in_reserve',
                                                group.hosts_in_reserve))
            consolidating = policy_name == cluster_policy.POWER_SAVING
            policy = (self._cluster_policy(cluster, meta) if consolidating
                      else self._even_policy(cluster, meta))
            try:
                plan = planner.plan(snapshot, policy, limits, seed=group.selection_seed,
                                    suspend_idle=consolidating)
            except model.InvalidSnapshot as exc:
                LOG.error('cluster %s not planned: inconsistent view: %s', cluster, exc)
                continue
            for action in plan.actions:
                actions.append(dict(orchestrator_mod.action_to_dict(action),
                                    cluster=cluster, automation=automation))
        return actions

    def _even_policy(self, cluster, meta):
        """even_distribution with the cluster's oVirt-style thresholds."""
        high = self._number_meta(cluster, meta, 'high_utilization', 1, 100)
        tolerance = self._number_meta(cluster, meta, 'balance_tolerance', 0, 100)
        minutes = self._number_meta(cluster, meta, 'overcommit_duration', 1, 1440)
        period = self.conf.loadbalancer.period
        return even.EvenDistributionPolicy(
            high=(high if high is not None else even.DEFAULT_HIGH * 100) / 100.0,
            tolerance=(tolerance if tolerance is not None
                       else even.DEFAULT_TOLERANCE * 100) / 100.0,
            window=max(1, round((minutes if minutes is not None
                                 else even.DEFAULT_DURATION_MINUTES) * 60 / period)),
            cooldown=self.conf.loadbalancer.migration_cooldown)

    def _cluster_policy(self, cluster, meta):
        """The configured policy, with oVirt-style per-cluster thresholds.

        ``high_utilization`` / ``low_utilization`` (percent) and
        ``overcommit_duration`` (minutes a load must last before it counts)
        tune the drs policy for one cluster; other policies ignore them.
        """
        if not isinstance(self.policy, drs.DrsPolicy):
            return self.policy
        overrides = {}
        high = self._number_meta(cluster, meta, 'high_utilization', 1, 100)
        if high is not None:
            overrides['overload_now'] = high / 100.0
            overrides['place_now'] = min(self.policy.place_now, high / 100.0)
        low = self._number_meta(cluster, meta, 'low_utilization', 0, 100)
        if low is not None:
            overrides['underload'] = low / 100.0
        minutes = self._number_meta(cluster, meta, 'overcommit_duration', 1, 1440)
        if minutes is not None:
            overrides['window'] = max(1, round(minutes * 60 / self.conf.loadbalancer.period))
        if not overrides:
            return self.policy
        tuned = copy.copy(self.policy)
        for name, value in overrides.items():
            setattr(tuned, name, value)
        return tuned

    def _number_meta(self, cluster, meta, key, low, high):
        if key not in meta:
            return None
        try:
            value = float(meta[key])
            if not low <= value <= high:
                raise ValueError
            return value
        except (TypeError, ValueError):
            self._warn_once(cluster, key, meta[key], 'a number in [%s, %s]' % (low, high))
            return None

    def _int_meta(self, cluster, meta, key, default):
        if key not in meta:
            return default
        try:
            value = int(meta[key])
            if value < 0:
                raise ValueError
            return value
        except (TypeError, ValueError):
            self._warn_once(cluster, key, meta[key], 'an integer >= 0')
            return default

    def _warn_once(self, cluster, key, value, expected):
        self.resolver.warn_invalid(cluster, key, value, expected)

    def _act(self, actions, view, budget):
        """Execute automatic clusters' actions; store manual ones for approval.

        Approved plans run first, within the same cycle ``budget`` as the
        lifecycle's evacuations and the automatic plan.
        """
        automatic = [a for a in actions if a['automation'] == 'automatic']
        manual = [a for a in actions if a['automation'] == 'manual']
        summary = {'started': 0, 'deferred': 0, 'pending': len(manual), 'approved_run': 0}
        plans.expire_pending(self.db)
        if manual:
            plans.save(self.db, 'manual', manual, 'pending')
        for plan_id, approved in plans.approved(self.db):
            if plans.set_status(self.db, plan_id, 'executing', 'approved'):
                result = self.orchestrator.execute(approved, view, budget)
                self._count(summary, result)
                # What the limits deferred runs in later cycles: the plan
                # stays approved until nothing of it waits any more.
                plans.set_status(self.db, plan_id,
                                 'approved' if result['waiting'] else 'done', 'executing')
                summary['approved_run'] += 1
        if automatic:
            # Every action is persisted by the orchestrator before it is taken;
            # the plan row records what this cycle started (bounded by the
            # limits), the rest is re-planned next cycle: a 10,000-host plan
            # would not fit a MySQL TEXT column.
            result = self.orchestrator.execute(automatic, view, budget)
            self._count(summary, result)
            if result['done']:
                plans.save(self.db, 'automatic', result['done'], 'done')
        return summary

    @staticmethod
    def _count(summary, result):
        summary['started'] += result['started']
        summary['deferred'] += len(result['skipped'])
