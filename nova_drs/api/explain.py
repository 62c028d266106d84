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

"""``GET /loadbalancer/explain/{hosts,servers}/X?cycles=N``: stored decisions.

Why a host was (or was not) suspended, woken or relieved, and why a server
was (or was not) moved, in the daemon's last ``cycles`` cycles (default 10,
1..100), newest first. As nova does, an unknown host or server is 404; a
known one without decisions (a server that stayed put) is 200 with an empty
list. A server deleted since keeps its decisions until they expire.
"""

from nova import exception as nova_exception
from nova.compute import api as compute_api
import webob.exc

from nova_drs.api import nova_hosts
from nova_drs.db import decisions

DEFAULT_CYCLES = 10
MAX_CYCLES = 100


def parse_cycles(text):
    if text is None:
        return DEFAULT_CYCLES
    cycles = int(text)  # the query schema allows digits only
    if not 1 <= cycles <= MAX_CYCLES:
        raise webob.exc.HTTPBadRequest('cycles=%s is not between 1 and %d' % (text, MAX_CYCLES))
    return cycles


class ExplainController:

    def __init__(self, database):
        self.database = database

    def host(self, context, host, cycles=None):
        cycles = parse_cycles(cycles)
        if nova_hosts.compute_hosts(context, host).get(host) is None:
            raise webob.exc.HTTPNotFound('compute host %r not found in nova' % host[:255])
        return 200, self._body('host', host, cycles)

    def server(self, context, server_id, cycles=None):
        cycles = parse_cycles(cycles)
        body = self._body('server', server_id, cycles)
        if not body['decisions']:
            try:
                compute_api.API().get(context, server_id)
            except nova_exception.InstanceNotFound:
                raise webob.exc.HTTPNotFound('server %s not found' % server_id[:64]) from None
        return 200, body

    def _body(self, kind, subject, cycles):
        found = decisions.explain(self.database, kind, subject, cycles)
        for row in found:
            row['cycle_at'] = row['cycle_at'].isoformat()
        return {kind: subject, 'cycles': cycles, 'decisions': found}
