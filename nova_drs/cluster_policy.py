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

"""The one reading of a host's DRS cluster policy from aggregate metadata.

The scheduler weighers, the nova-loadbalancer daemon and anything that
shows a host's policy call this module, so they cannot disagree: a host
outside every ``drs_policy`` aggregate (or whose aggregates disagree, or
carry an invalid value) gets ``[loadbalancer] default_policy`` (``none``:
left alone). The keys are declared and parsed by nova_drs.aggregate_keys;
an invalid value is reported once per aggregate, key and value by the
Resolver that saw it.
"""

from nova_drs import aggregate_keys
from nova_drs.conf import policy_names

NONE = policy_names.NONE
POWER_SAVING = policy_names.POWER_SAVING
EVEN_DISTRIBUTION = policy_names.EVEN_DISTRIBUTION
POLICIES = aggregate_keys.POLICIES
AUTOMATION_LEVELS = aggregate_keys.AUTOMATION_LEVELS
#: The cluster of hosts outside every aggregate carrying ``drs_policy``.
DEFAULT_CLUSTER = 'default'


def cluster_name(aggregates):
    """A host's DRS cluster: the first of its aggregates (by name) that carries
    ``drs_policy``, else DEFAULT_CLUSTER. ``aggregates``: (name, metadata) pairs."""
    for name, metadata in sorted(aggregates, key=lambda pair: pair[0]):
        if aggregate_keys.POLICY_KEY in (metadata or {}):
            return name
    return DEFAULT_CLUSTER


class Resolver(aggregate_keys.Reader):
    """Policy, automation and cluster keys of hosts/clusters, with one warn-once.

    ``aggregates`` arguments are iterables of ``(name, metadata)`` pairs so
    that nova's Aggregate objects and the REST API's dicts both fit.
    """

    def aggregate_policy(self, name, metadata):
        """The aggregate's valid ``drs_policy``, or None (unset or invalid)."""
        return self.value(name, metadata, aggregate_keys.POLICY_KEY)

    def host_policy(self, aggregates, default):
        """The policy of a host in these aggregates; ``default`` unless they
        name exactly one valid policy."""
        aggregates = list(aggregates)
        values = set()
        for name, metadata in aggregates:
            value = self.aggregate_policy(name, metadata)
            if value is not None:
                values.add(value)
        if len(values) == 1:
            return values.pop()
        if len(values) > 1:
            names = ','.join(sorted(str(n) for n, m in aggregates
                                    if (m or {}).get(aggregate_keys.POLICY_KEY) is not None))
            self.warn_invalid(names, aggregate_keys.POLICY_KEY, ','.join(sorted(values)),
                              'one policy per host; [loadbalancer] default_policy applies')
        return default

    def automation(self, name, metadata, default):
        """``drs_automation`` of a cluster's aggregate, else ``default``."""
        return self.value(name, metadata, aggregate_keys.AUTOMATION_KEY, default)

    def cluster_value(self, aggregates, key, fallback):
        """Cluster-wide key ``key`` of a host in ``aggregates``: the value its
        DRS cluster's aggregate holds (what the daemon plans the cluster
        with), else ``fallback``."""
        aggregates = list(aggregates)
        cluster = cluster_name(aggregates)
        for name, metadata in aggregates:
            if name == cluster:
                return self.value(name, metadata, key, fallback)
        return fallback
