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

"""The DRS cluster of a host and its floor of active hosts, as the daemon resolves them.

A host's cluster is nova_drs.cluster_policy.cluster_name(), as for the
daemon; hosts in no ``drs_policy`` aggregate form the cluster ``default``.
The floor is ``min_active_hosts + hosts_in_reserve``, each from the
cluster's aggregate metadata when it holds a non-negative integer, else
from ``[loadbalancer]`` (read through nova_drs.aggregate_keys, as the daemon
reads them), so an admin's suspend is held to the limit the daemon keeps.
"""

import collections

from nova import objects

from nova_drs import aggregate_keys
from nova_drs import cluster_policy
from nova_drs import membership
from nova_drs.api import nova_hosts


class Cluster(collections.namedtuple(
        'Cluster', 'name members min_active_hosts hosts_in_reserve')):
    __slots__ = ()

    @property
    def floor(self):
        return self.min_active_hosts + self.hosts_in_reserve


def cluster_of(context, host, conf):
    """The Cluster of ``host``: its name, member compute hosts and limits."""
    computes = set(nova_hosts.compute_hosts(context))
    aggregates = objects.AggregateList.get_all(context)
    of_host = membership.of_hosts((a.name, a.metadata, a.hosts) for a in aggregates)
    name = cluster_policy.cluster_name(of_host.get(host, ()))
    members = {member for member in computes
               if cluster_policy.cluster_name(of_host.get(member, ())) == name}
    metadata = next((a.metadata or {} for a in aggregates if a.name == name), {})
    group = conf.loadbalancer
    read = aggregate_keys.READER.value
    return Cluster(name, frozenset(members | {host}),
                   read(name, metadata, 'min_active_hosts', group.min_active_hosts),
                   read(name, metadata, 'hosts_in_reserve', group.hosts_in_reserve))
