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

"""Decide: plan every DRS cluster with its own policy, thresholds and limits.

Pure apart from the configuration: the daemon's cycle and ``nova-drs-sim
--from-stats`` call the same planner, so the same snapshot gives the same
plan in both.
"""

import dataclasses

from oslo_log import log as logging

from nova_drs import aggregate_keys
from nova_drs import cluster_policy
from nova_drs import loadbalancer_plugins
from nova_drs import opt_out
from nova_drs.db import plans
from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner

LOG = logging.getLogger(__name__)


def _opted_in(view, hosts, automation):
    """The instances on ``hosts``; ``manual`` servers (pinned by build_view) may
    move in a manual cluster, where an admin approves the plan."""
    if automation != opt_out.MANUAL:
        return tuple(i for i in view.snapshot.instances if i.host in hosts)
    return tuple(dataclasses.replace(i, movable=True)
                 if view.opt_out.get(i.uuid) == opt_out.MANUAL else i
                 for i in view.snapshot.instances if i.host in hosts)


class ClusterPlanner:
    """Plans a View (or anything with ``snapshot``, ``aggregates``, ``clusters``)."""

    def __init__(self, conf, policy, resolver=None):
        self.conf = conf
        self.policy = policy
        self.resolver = resolver or cluster_policy.Resolver()

    def plan(self, view, record=None):
        """Plan every cluster with its own policy and limits: [db.plans.Action],
        the plans' findings into ``record`` (daemon/explain.Decisions) if given.

        Each host's policy comes from the shared resolver (as the weighers
        see it); hosts whose policy is ``none`` are neither sources, nor
        destinations, nor suspended.
        """
        group = self.conf.loadbalancer
        by_cluster = {}
        for host in view.snapshot.hosts:
            policy_name = self.resolver.host_policy(view.membership.get(host.name, ()),
                                                    group.default_policy)
            if policy_name != cluster_policy.NONE:
                by_cluster.setdefault((host.cluster, policy_name), []).append(host)
        actions = []
        for (cluster, policy_name), hosts in sorted(by_cluster.items()):
            meta = view.clusters.get(cluster) or {}
            if aggregate_keys.POLICY_KEY not in meta:
                meta = {}  # not a DRS cluster: hosts nobody opted in, global defaults
            names = {h.name for h in hosts}
            automation = self.resolver.automation(cluster, meta, group.automation)
            snapshot = model.Snapshot(
                hosts=tuple(hosts),
                instances=_opted_in(view, names, automation),
                migrations=tuple(m for m in view.snapshot.migrations
                                 if m.source in names and m.destination in names),
                now=view.snapshot.now)
            limits = self.safety_limits(cluster, meta)
            consolidating = policy_name == cluster_policy.POWER_SAVING
            policy = (self._cluster_policy(cluster, meta) if consolidating
                      else self._even_policy(cluster, meta))
            try:
                plan = planner.plan(snapshot, policy, limits, seed=group.selection_seed,
                                    suspend_idle=consolidating, explain=record is not None)
            except model.InvalidSnapshot as exc:
                LOG.error('cluster %s not planned: inconsistent view: %s', cluster, exc)
                continue
            if record is not None:
                record.add_findings(plan.findings)
            for action in plan.actions:
                actions.append(plans.Action(action, cluster, automation))
        return actions

    def _even_policy(self, cluster, meta):
        """even_distribution with the cluster's oVirt-style thresholds; the
        policy's own defaults where the cluster sets none."""
        overrides = {'cooldown': self.conf.loadbalancer.migration_cooldown}
        high = self.resolver.value(cluster, meta, 'high_utilization')
        if high is not None:
            overrides['high'] = high / 100.0
        tolerance = self.resolver.value(cluster, meta, 'balance_tolerance')
        if tolerance is not None:
            overrides['tolerance'] = tolerance / 100.0
        minutes = self.resolver.value(cluster, meta, 'overcommit_duration',
                                      even.DEFAULT_DURATION_MINUTES)
        overrides['window'] = self._cycles(minutes)
        return loadbalancer_plugins.build('policy', 'even_distribution', overrides,
                                          _source(cluster))

    def _cycles(self, minutes):
        return max(1, round(minutes * 60 / self.conf.loadbalancer.period))

    def _cluster_policy(self, cluster, meta):
        """The configured policy, with oVirt-style per-cluster thresholds.

        ``high_utilization`` / ``low_utilization`` (percent) and
        ``overcommit_duration`` (minutes a load must last before it counts)
        tune the drs policy for one cluster; other policies ignore them. A
        value beyond a parameter's bounds counts as the bound (a window
        longer than the samples kept reads them all anyway).
        """
        if not isinstance(self.policy, drs.DrsPolicy):
            return self.policy
        overrides = {}
        high = self.resolver.value(cluster, meta, 'high_utilization')
        if high is not None:
            overrides['overload_now'] = high / 100.0
            overrides['place_now'] = min(self.policy.place_now, high / 100.0)
        low = self.resolver.value(cluster, meta, 'low_utilization')
        if low is not None:
            overrides['underload'] = low / 100.0
        minutes = self.resolver.value(cluster, meta, 'overcommit_duration')
        if minutes is not None:
            overrides['window'] = self._cycles(minutes)
        if not overrides:
            return self.policy
        return loadbalancer_plugins.rebuild(
            self.policy, _within_bounds(type(self.policy), overrides), _source(cluster))

    def safety_limits(self, cluster, meta):
        """The floor of ``cluster`` as plan() computes it, for the orchestrator's
        locked check at act time (``meta``: the cluster's aggregate metadata)."""
        if aggregate_keys.POLICY_KEY not in (meta or {}):
            meta = {}  # not a DRS cluster: global defaults, as in plan()
        group = self.conf.loadbalancer
        return model.SafetyLimits(
            min_active_hosts=self.resolver.value(cluster, meta, 'min_active_hosts',
                                                 group.min_active_hosts),
            hosts_in_reserve=self.resolver.value(cluster, meta, 'hosts_in_reserve',
                                                 group.hosts_in_reserve))


def _source(cluster):
    return 'cluster %s aggregate metadata' % cluster


def _within_bounds(cls, values):
    """``values`` moved into the bounds of ``cls``'s parameters."""
    properties = cls.PARAMETERS['properties']
    return {name: min(max(value, properties[name].get('minimum', value)),
                      properties[name].get('maximum', value))
            for name, value in values.items()}
