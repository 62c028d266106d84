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

A server is named by UUID or by name, resolved like ``nova lb-explain`` and
``openstack server show`` do: an exact name across all projects (the API is
admin-only), 409 when several servers bear it. A host's body carries its
power state now (``state``: suspended since when and why), so a suspended
host the daemon no longer plans for still gets an answer.
"""

import re

from nova import exception as nova_exception
from nova.compute import api as compute_api
from oslo_utils import uuidutils
import webob.exc

from nova_drs.api import faults
from nova_drs.api import nova_hosts
from nova_drs.db import decisions
from nova_drs.db import hosts as drs_hosts

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
        body = self._body('host', host, cycles)
        record = drs_hosts.public_records(self.database, host).get(host) or {}
        since = record.get('state_changed_at')
        body['state'] = {'state': record.get('suspend_state', drs_hosts.ACTIVE),
                         'since': faults.isotime(since) if since else None,
                         'reason': record.get('state_reason')}
        return 200, body

    def server(self, context, server_id, cycles=None):
        cycles = parse_cycles(cycles)
        if not uuidutils.is_uuid_like(server_id):
            server_id = self._server_named(context, server_id)
        body = self._body('server', server_id, cycles)
        if not body['decisions']:
            try:
                compute_api.API().get(context, server_id)
            except nova_exception.InstanceNotFound:
                raise webob.exc.HTTPNotFound('server %s not found' % server_id[:64]) from None
        return 200, body

    @staticmethod
    def _server_named(context, name):
        """The UUID of the one live server called ``name`` (nova filters by regex)."""
        found = compute_api.API().get_all(
            context, search_opts={'name': '^%s$' % re.escape(name), 'deleted': False},
            limit=2, expected_attrs=[])
        exact = [server.uuid for server in found if server.display_name == name]
        if not exact:
            raise webob.exc.HTTPNotFound('server %s not found' % name[:64])
        if len(exact) > 1:
            raise webob.exc.HTTPConflict('more than one server is named %s: give its UUID'
                                         % name[:64])
        return exact[0]

    def _body(self, kind, subject, cycles):
        found = decisions.explain(self.database, kind, subject, cycles)
        for row in found:
            row['cycle_at'] = faults.isotime(row['cycle_at'])
        return {kind: subject, 'cycles': cycles, 'decisions': found}
