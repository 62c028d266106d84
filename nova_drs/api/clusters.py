"""The DRS cluster of a host and its floor of active hosts, as the daemon resolves them.

A host's cluster is the first aggregate (by name) that carries
``drs_policy``; hosts in no such aggregate form the cluster ``default``.
The floor is ``min_active_hosts + hosts_in_reserve``, each from the
cluster's aggregate metadata when it holds a non-negative integer, else
from ``[loadbalancer]`` (nova_drs.daemon.service reads them the same way),
so an admin's suspend is held to the limit the daemon keeps.
"""

import collections

from nova import objects

from nova_drs.api import nova_hosts

DEFAULT_CLUSTER = 'default'


class Cluster(collections.namedtuple(
        'Cluster', 'name members min_active_hosts hosts_in_reserve')):
    __slots__ = ()

    @property
    def floor(self):
        return self.min_active_hosts + self.hosts_in_reserve


def _int_meta(metadata, key, default):
    try:
        value = int(metadata[key])
    except (KeyError, TypeError, ValueError):
        return default
    return value if value >= 0 else default


def cluster_of(context, host, conf):
    """The Cluster of ``host``: its name, member compute hosts and limits."""
    computes = set(nova_hosts.compute_hosts(context))
    aggregates = sorted(objects.AggregateList.get_all(context), key=lambda a: a.name)
    policy_aggregates = [a for a in aggregates if 'drs_policy' in (a.metadata or {})]
    name, members = DEFAULT_CLUSTER, None
    for aggregate in policy_aggregates:
        if host in (aggregate.hosts or ()):
            name, members = aggregate.name, computes & set(aggregate.hosts)
            break
    if members is None:
        clustered = {member for aggregate in policy_aggregates
                     for member in aggregate.hosts or ()}
        members = computes - clustered
    metadata = next((a.metadata or {} for a in aggregates if a.name == name), {})
    group = conf.loadbalancer
    return Cluster(name, frozenset(members | {host}),
                   _int_meta(metadata, 'min_active_hosts', group.min_active_hosts),
                   _int_meta(metadata, 'hosts_in_reserve', group.hosts_in_reserve))
