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

"""What one cycle may still start: migrations per source, destination and
cluster, suspends and wakes per cluster.

One ``Budget`` per cycle is shared by the host lifecycle's evacuations,
approved manual plans and the automatic plan; migrations already in flight
(ours and nova's) count from the start.
"""

import collections

from nova_drs import cluster_policy
from nova_drs.daemon import cloud_view
from nova_drs.db import hosts as drs_hosts


class Budget:
    """What one cycle may still start: migrations per source, destination and
    cluster (counting those already in flight), suspends and wakes per cluster.

    An evacuation (suspend, maintenance) lets nova's scheduler choose the
    destination, so until nova's migration record names it, it is "unplaced":
    it counts on its source and cluster, and against the free destination
    slots of every host that could receive it (``receivers``). A new
    evacuation starts only while those slots outnumber the unplaced ones:
    when every possible destination is at ``per_destination``, evacuations
    wait. The next cycle counts each one on the destination nova chose.
    """

    def __init__(self, limits, cluster_of, in_flight, receivers=None):
        self.limits = limits
        self.cluster_of = cluster_of            # host -> cluster name
        self.busy = {'source': collections.Counter(), 'destination': collections.Counter(),
                     'cluster': collections.Counter(), 'suspend': collections.Counter(),
                     'wake': collections.Counter()}
        #: migrations in flight or started whose destination nova has not chosen yet
        self.unplaced = 0
        #: free per-destination slots on the hosts that can receive a server
        #: (None: receivers unknown, evacuations bounded by source and cluster only)
        self.room = None
        for source, destination in in_flight:
            self.take_migration(source, destination)
        self.receivers = frozenset(receivers or ())
        if receivers is not None:
            self.room = sum(
                max(0, limits['per_destination'] - self.busy['destination'][host])
                for host in self.receivers)

    def migration_refused(self, source, destination=None):
        """Why a migration from ``source`` (to ``destination``) must wait, or None."""
        if self.busy['source'][source] >= self.limits['per_host']:
            return 'source at its migration limit'
        if destination is not None and \
                self.busy['destination'][destination] >= self.limits['per_destination']:
            return 'destination at its migration limit'
        if self.busy['cluster'][self.cluster_of(source)] >= self.limits['per_cluster']:
            return 'cluster at its migration limit'
        if destination is None and self.room is not None and self.unplaced >= self.room:
            return 'every possible destination at its migration limit'
        return None

    def take_migration(self, source, destination=None):
        self.busy['source'][source] += 1
        if destination is None:
            self.unplaced += 1
        else:
            if (self.room is not None and destination in self.receivers
                    and self.busy['destination'][destination]
                    < self.limits['per_destination']):
                self.room -= 1
            self.busy['destination'][destination] += 1
        self.busy['cluster'][self.cluster_of(source)] += 1

    def woke(self, host):
        """``host`` became active and enabled during this cycle: it receives
        servers now, although the cycle observed it suspended. Without this a
        maintenance that woke it would see nowhere to go for the rest of the
        cycle and wake one more host."""
        if self.room is None or host in self.receivers:
            return
        self.receivers = self.receivers | {host}
        self.room += max(0, self.limits['per_destination'] - self.busy['destination'][host])

    def nowhere_to_go(self):
        """True when no host can receive a server at all (every other host of
        the cloud suspended, disabled or down): moving would only fail."""
        return self.room is not None and not self.receivers

    def admit_evacuation(self, source, destination=None):
        """The host lifecycle asks before each server it moves off ``source``
        (to the plan's ``destination``, or where nova's scheduler chooses)."""
        if self.migration_refused(source, destination):
            return False
        self.take_migration(source, destination)
        return True

    def may_receive(self, host):
        """Whether nova's scheduler could place a server on ``host`` (True
        when the receivers are unknown)."""
        return self.room is None or host in self.receivers

    def power_refused(self, kind, host):
        """Why a suspend or wake of ``host`` must wait, or None."""
        limit = self.limits['suspends_per_cycle' if kind == 'suspend' else 'wakes_per_cycle']
        if self.busy[kind][self.cluster_of(host)] >= limit:
            return 'cluster at its %s limit for this cycle' % kind
        return None

    def take_power(self, kind, host):
        self.busy[kind][self.cluster_of(host)] += 1


def receivers_of(raw):
    """Hosts nova's scheduler may choose for an evacuation: nova-compute enabled
    and up, and active for DRS."""
    return [host for host, service in raw.services.items()
            if service.get('status') == 'enabled' and service.get('state') == 'up'
            and (raw.records.get(host) or {}).get('suspend_state',
                                                  drs_hosts.ACTIVE) == drs_hosts.ACTIVE]


def budget_for(view, limits, clusters=None):
    """The cycle's Budget: in-flight migrations (ours and nova's) already count.

    ``view`` is a View, or an observe.Raw with ``clusters`` ({host: cluster}).
    """
    if clusters is None:
        clusters = {h.name: h.cluster for h in view.snapshot.hosts}
    in_flight = getattr(view, 'in_flight', None)
    if in_flight is None:
        in_flight = cloud_view.under_way(view)
    default = cluster_policy.DEFAULT_CLUSTER
    receivers = receivers_of(view) if hasattr(view, 'records') else None
    return Budget(limits, lambda host: clusters.get(host, default), in_flight, receivers)
