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

"""The daemon's view of nova and placement: their REST APIs, nothing else.

The daemon never reads nova's database (the 2015 implementation did). Every
call goes through a keystoneauth Adapter, so credentials come from the
``[drs_auth]`` config group, never from code.
"""

import concurrent.futures
import logging
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from oslo_utils import timeutils

from nova_drs.observability import metrics

LOG = logging.getLogger(__name__)

COMPUTE_MICROVERSION = '2.95'
PLACEMENT_MICROVERSION = '1.39'
#: 2.33+ pages os-hypervisors; from 2.88 on the detail view asks every
#: compute for its uptime over RPC, which the daemon never needs.
HYPERVISORS_MICROVERSION = '2.53'
#: Requests in flight at once for per-provider reads (a small bounded pool).
CONCURRENT_REQUESTS = 8
#: A listing longer than this many pages is a loop, not a cloud.
MAX_PAGES = 100000


class NovaUnavailable(Exception):
    """nova or placement could not answer; the cycle must not act on half a view."""


class IncompleteListing(NovaUnavailable):
    """A paged listing could not be followed to its last page."""


class NovaRequestFailed(Exception):
    """nova refused one request (4xx); the message carries nova's explanation."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _explain(response):
    try:
        body = response.json()
        detail = next(iter(body.values()))
        return detail.get('message') or str(body)
    except Exception:
        return (response.text or '').strip()[:300]


class NovaAPI:
    """Thin client over the compute and placement REST APIs."""

    def __init__(self, compute, placement):
        self._compute = compute
        self._placement = placement

    @property
    def placement_adapter(self):
        """The raw placement Adapter (overcommit sync speaks placement itself)."""
        return self._placement

    def _call(self, adapter, method, url, microversion, body=None, params=None):
        metrics.count_request(getattr(adapter, 'service_type', None) or 'unknown', method)
        try:
            response = adapter.request(url, method, json=body, microversion=microversion,
                                       params=params, raise_exc=False)
        except ks_exc.ClientException as exc:
            raise NovaUnavailable('%s %s: %s' % (method, url, exc)) from None
        if response.status_code >= 500:
            raise NovaUnavailable('%s %s: HTTP %d %s' % (
                method, url, response.status_code, _explain(response)))
        if response.status_code >= 400:
            raise NovaRequestFailed('%s %s: HTTP %d %s' % (
                method, url, response.status_code, _explain(response)),
                response.status_code)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def compute(self, method, url, body=None, params=None):
        return self._call(self._compute, method, url, COMPUTE_MICROVERSION, body, params)

    def placement(self, method, url, body=None, params=None):
        return self._call(self._placement, method, url, PLACEMENT_MICROVERSION, body, params)

    def _linked(self, url, key, params=None, microversion=COMPUTE_MICROVERSION):
        """Every item of a nova listing, following ``<key>_links`` next links.

        nova returns at most ``[api] max_limit`` items a page and a next
        link while more may follow; only its marker is taken from the link,
        so the listing stays on the configured endpoint.
        """
        params = dict(params or {})
        items, seen = [], set()
        for _page in range(MAX_PAGES):
            body = self._call(self._compute, 'GET', url, microversion, params=params)
            items.extend(body[key])
            marker = _next_marker(body.get(key + '_links'))
            if marker is None:
                return items
            if marker in seen:
                raise IncompleteListing('GET %s: nova repeated the page after %s' % (
                    url, marker))
            seen.add(marker)
            params['marker'] = marker
        raise IncompleteListing('GET %s: more than %d pages' % (url, MAX_PAGES))

    def _offset_paged(self, url, key, params):
        """Every item of a limit/offset listing (os-server-groups): until an empty page."""
        items = []
        for _page in range(MAX_PAGES):
            page = self.compute('GET', url, params=dict(params, offset=len(items)))[key]
            if not page:
                return items
            items.extend(page)
        raise IncompleteListing('GET %s: more than %d pages' % (url, MAX_PAGES))

    def concurrently(self, function, arguments):
        """``{argument: function(argument)}`` with a few requests in flight at once."""
        arguments = list(arguments)
        if len(arguments) <= 1:
            return {argument: function(argument) for argument in arguments}
        with concurrent.futures.ThreadPoolExecutor(CONCURRENT_REQUESTS) as pool:
            return dict(zip(arguments, pool.map(function, arguments), strict=True))

    # -- compute services -------------------------------------------------
    def compute_services(self):
        return self.compute('GET', '/os-services',
                            params={'binary': 'nova-compute'})['services']

    def compute_service(self, host):
        services = self.compute('GET', '/os-services',
                                params={'binary': 'nova-compute', 'host': host})['services']
        return services[0] if services else None

    def disable_service(self, service_id, reason):
        self.compute('PUT', '/os-services/%s' % service_id,
                     {'status': 'disabled', 'disabled_reason': reason})

    def enable_service(self, service_id):
        self.compute('PUT', '/os-services/%s' % service_id, {'status': 'enabled'})

    # -- servers ----------------------------------------------------------
    def _servers(self, **filters):
        return self._linked('/servers/detail', 'servers', dict(filters, all_tenants=1))

    def servers_on_host(self, host):
        """Every server nova places on ``host``, whatever its state."""
        return self._servers(host=host)

    def all_servers(self):
        return self._servers()

    def servers_changed_since(self, since):
        """Servers changed at or after ``since`` (ISO 8601), deleted ones included."""
        return self._servers(**{'changes-since': since})

    def live_migrate(self, server_id, host=None):
        """Live-migrate; a named host is still validated by nova's scheduler (no force)."""
        self.compute('POST', '/servers/%s/action' % server_id,
                     {'os-migrateLive': {'host': host, 'block_migration': 'auto'}})

    def cold_migrate(self, server_id, host=None):
        body = {'migrate': {'host': host} if host else None}
        self.compute('POST', '/servers/%s/action' % server_id, body)

    def confirm_resize(self, server_id):
        self.compute('POST', '/servers/%s/action' % server_id, {'confirmResize': None})

    def server_migrations(self, server_id):
        """In-progress live migrations of one server."""
        return self.compute('GET', '/servers/%s/migrations' % server_id)['migrations']

    def abort_live_migration(self, server_id, migration_id):
        self.compute('DELETE', '/servers/%s/migrations/%s' % (server_id, migration_id))

    def migrations(self, **filters):
        """nova's migration records, every page, filtered by instance_uuid,
        source_compute, status, migration_type (os-migrations parameters)."""
        return self._linked('/os-migrations', 'migrations', filters)

    def migrations_in_status(self, statuses):
        """Migration records in any of ``statuses`` (nova filters one status a request)."""
        found = []
        for status in sorted(statuses):
            found.extend(self.migrations(status=status))
        return found

    # -- inventory --------------------------------------------------------
    def hypervisors(self):
        return self._linked('/os-hypervisors/detail', 'hypervisors',
                            microversion=HYPERVISORS_MICROVERSION)

    def aggregates(self):
        return self.compute('GET', '/os-aggregates')['aggregates']

    def server_groups(self):
        return self._offset_paged('/os-server-groups', 'server_groups',
                                  {'all_projects': 'True'})

    def resource_providers(self):
        """{provider uuid: generation} of every resource provider (placement does not page)."""
        return {p['uuid']: p['generation'] for p in
                self.placement('GET', '/resource_providers')['resource_providers']}

    def provider_usages(self, provider_uuid):
        return self.placement('GET', '/resource_providers/%s/usages'
                              % provider_uuid)['usages']

    # -- scaling (nova_drs.scale) -----------------------------------------
    def server(self, server_id):
        return self.compute('GET', '/servers/%s' % server_id)['server']

    def flavor(self, id_or_name):
        """A flavor by id, else by exact name; None when neither exists."""
        try:
            return self.compute('GET', '/flavors/%s' % id_or_name)['flavor']
        except NovaRequestFailed as exc:
            if exc.status != 404:
                raise
        for flavor in self._linked('/flavors/detail', 'flavors', {'is_public': 'None'}):
            if flavor['name'] == id_or_name:
                return flavor
        return None

    def resize(self, server_id, flavor_id):
        """Cold resize; nova's scheduler picks the host (no host parameter exists)."""
        self.compute('POST', '/servers/%s/action' % server_id,
                     {'resize': {'flavorRef': flavor_id}})

    def revert_resize(self, server_id):
        self.compute('POST', '/servers/%s/action' % server_id, {'revertResize': None})

    def provider_inventories(self, provider_uuid):
        return self.placement('GET', '/resource_providers/%s/inventories'
                              % provider_uuid)['inventories']

    def provider_inventory_body(self, provider_uuid):
        """The whole inventories body: inventories plus the provider generation."""
        return self.placement('GET', '/resource_providers/%s/inventories' % provider_uuid)


def parse_time(value):
    """nova's timestamps as naive UTC (an offset, when present, is applied)."""
    if not value:
        return None
    return timeutils.normalize_time(timeutils.parse_isotime(value))


def _next_marker(links):
    """The marker of a ``rel=next`` link, or None on the last page."""
    for link in links or ():
        if link.get('rel') == 'next':
            markers = parse.parse_qs(parse.urlsplit(link['href']).query).get('marker')
            if not markers:
                raise IncompleteListing('next link without a marker: %s' % link['href'])
            return markers[-1]
    return None
