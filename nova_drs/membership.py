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

"""Which aggregates each host is in: the one reading of aggregate membership.

A host's DRS cluster, policy and automation (cluster_policy), the aggregate
allow/deny rules (daemon/cloud_view.Rules), the API's cluster of a host and
the what-if replay of a recorded cycle all start from this map, built once
per cycle or request. Pure: nova's Aggregate objects and the REST API's
dicts both reduce to (name, metadata, hosts) triples.
"""


def of_hosts(aggregates):
    """{host: [(aggregate name, metadata), ...] in name order}.

    ``aggregates``: (name, metadata, hosts) triples.
    """
    found = {}
    for name, metadata, hosts in sorted(aggregates, key=lambda triple: triple[0]):
        for host in hosts or ():
            found.setdefault(host, []).append((name, metadata or {}))
    return found


def of_listed(aggregates):
    """``of_hosts`` of aggregates as nova's REST API lists them (dicts)."""
    return of_hosts((a['name'], a.get('metadata'), a.get('hosts')) for a in aggregates)
