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

"""``GET /loadbalancer/energy``: kWh drawn and saved, from the DRS database.

Query: ``since`` (``7d``, ``12h``, ``30m`` or an ISO 8601 time; default 24
hours), ``cluster`` (a nova aggregate name). Aggregates, read in-process
from nova, give cluster membership and ``drs_power_curve`` overrides.
"""

from nova import objects
from oslo_utils import timeutils
import webob.exc

from nova_drs import conf as drs_conf
from nova_drs.api import faults
from nova_drs.observability import energy


class EnergyController:
    """The energy report of every host, or of one cluster's hosts."""

    def __init__(self, database):
        self.database = database

    def report(self, context, since=None, cluster=None):
        """The middleware has checked the policy and the query's shape."""
        now = timeutils.utcnow()
        try:
            since = energy.parse_since(since or '24h', now)
        except ValueError as exc:
            raise webob.exc.HTTPBadRequest(str(exc)) from None
        aggregates = [{'name': a.name, 'hosts': list(a.hosts or ()),
                       'metadata': dict(a.metadata or {})}
                      for a in objects.AggregateList.get_all(context)]
        hosts = None
        if cluster is not None:
            members = [a['hosts'] for a in aggregates if a['name'] == cluster]
            if not members:
                raise webob.exc.HTTPNotFound('cluster (aggregate) %s not found' % cluster)
            hosts = members[0]
        result = energy.report(self.database, drs_conf.CONF, since, now, hosts,
                               energy.host_curves(aggregates))
        result.update(since=faults.isotime(since), until=faults.isotime(now), cluster=cluster)
        return 200, {'energy': result}
