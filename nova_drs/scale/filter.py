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

"""ScaleTargetFilter: keeps a scaling resize on the hosts nova-drs chose.

nova 34's resize takes only a flavor: no destination host, and scheduler
hints are fixed at boot. While nova-drs scales a server (an ``lb_requests``
row ``scale_server`` in status running), this filter passes only the
request's ``targets``: the current host for an in-place scale, hosts of the
same cluster aggregate with capacity for a move. Every other filter still
runs, nothing is forced. Servers without a running scale pass everywhere.

If the DRS database cannot be read the filter passes every host and logs a
warning; the daemon then checks the host nova picked and reverts a resize
that left the cluster.
"""

from nova.scheduler import filters
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api
from nova_drs.db import requests as db_requests

LOG = logging.getLogger(__name__)


class ScaleTargetFilter(filters.BaseHostFilter):
    """Passes only the scale targets of a server being scaled."""

    RUN_ON_REBUILD = False

    def filter_all(self, host_states, spec_obj):
        host_states = list(host_states)
        try:
            allowed = db_requests.scale_targets(db_api.shared_database(drs_conf.CONF),
                                                spec_obj.instance_uuid)
        except Exception as exc:
            LOG.warning('ScaleTargetFilter cannot read the DRS database (%s); '
                        'passing every host', exc)
            return host_states
        if allowed is None:
            return host_states
        return [state for state in host_states if state.host in allowed]

    def host_passes(self, host_state, spec_obj):
        return bool(self.filter_all([host_state], spec_obj))
