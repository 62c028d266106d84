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

"""nova-drs's view of nova and placement: their REST APIs, nothing else.

The daemon's, the scale executor's and the commands' (hence here and not in
nova_drs.daemon, which only the commands and the simulator may import).

The daemon never reads nova's database (the 2015 implementation did). Every
call goes through one openstacksdk Connection built from the ``[drs_auth]``
config group, so credentials never come from code. Methods return nova's and
placement's JSON as their API references document it: the pure snapshot
builder (``cloud_view``) reads that shape.
"""

import concurrent.futures
import contextlib
import functools
import inspect
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs import exception
from nova_drs.clients import placement_usages
from nova_drs.conf import loadbalancer as lb_conf
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


def retry_options(auth_group):
    """``[drs_auth]``'s request-retry options, as keystoneauth's Adapter names
    them: ``NovaAPI(connection, retries=retry_options(conf.drs_auth))`` sets
    them on every proxy; the daemon's connection and the closed-loop twin's
    are built alike."""
    options = {name: getattr(auth_group, name) for name in lb_conf.RETRY_OPTIONS}
    options['retriable_status_codes'] = options['retriable_status_codes'] or None
    return options


def _apply_retries(proxy, retries):
    """``retries`` on one openstacksdk proxy (a keystoneauth Adapter), alike
    on every openstacksdk release nova-drs supports.

    Before 4.22 (2025.2's 4.7, 2026.1's 4.10) openstacksdk hands its proxies
    only two of the five options from its config, and ``Proxy.request`` gives
    every request ``connect_retries=1`` unless its caller names one, which
    beats the adapter's own: a hung nova-api cost ``[drs_auth] timeout`` twice
    whatever ``connect_retries`` said. So the options go on the adapter
    itself, and where ``Proxy.request`` has that default the proxy's requests
    name the adapter's value (tests/unit/sim/test_twin.py proves both on the
    three releases' openstacksdk).
    """
    for name, value in retries.items():
        setattr(proxy, name, value)
    parameter = inspect.signature(type(proxy).request).parameters.get('connect_retries')
    if parameter is not None and parameter.default is not None:
        proxy.request = functools.partial(type(proxy).request, proxy,
                                          connect_retries=proxy.connect_retries)


class NovaAPI:
    """nova and placement through one openstacksdk Connection.

    Actions and single-resource reads are the SDK's calls. nova's paged
    listings and the reads every cycle makes per host go through the same
    Connection's proxies (keystoneauth Adapters) as raw requests, for the
    reasons in doc/source/architecture.md "One client per API".
    """

    def __init__(self, connection, retries=None):
        """``retries``: ``retry_options(conf.drs_auth)``; None keeps
        openstacksdk's own (the commands that ask once and report)."""
        self._connection = connection
        self._retries = retries
        self._retries_set = set()

    def _proxy(self, service):
        """The connection's proxy of ``service``, with ``retries`` set on it
        the first time: openstacksdk builds a proxy (and asks the endpoint for
        its versions) on first use, so building one here would call nova."""
        proxy = getattr(self._connection, service)
        if self._retries and service not in self._retries_set:
            _apply_retries(proxy, self._retries)
            self._retries_set.add(service)
        return proxy

    @property
    def _compute(self):
        return self._proxy('compute')

    @property
    def _placement(self):
        return self._proxy('placement')

    @property
    def placement_adapter(self):
        """The placement proxy, a keystoneauth Adapter (the overcommit sync's)."""
        return self._placement

    @contextlib.contextmanager
    def _sdk(self, service, method, what):
        """One SDK call: counted, and its errors turned into the daemon's two kinds."""
        metrics.count_request(service, method)
        try:
            yield
        except sdk_exc.HttpException as exc:
            status = exc.status_code or 0
            message = '%s %s: HTTP %s %s' % (method, what, status, exc.details or exc)
            if status >= 500 or not status:
                raise exception.NovaUnavailable(message, status or None) from None
            raise exception.NovaRequestFailed(message, status) from None
        except (sdk_exc.SDKException, ks_exc.ClientException) as exc:
            raise exception.NovaUnavailable('%s %s: %s' % (method, what, exc)) from None

    def _get(self, url, params=None, microversion=COMPUTE_MICROVERSION, service='compute'):
        """One raw read: a page of a nova listing, or a per-host read of every cycle."""
        with self._sdk(service, 'GET', url):
            proxy = self._compute if service == 'compute' else self._placement
            response = proxy.get(url, microversion=microversion, params=params,
                                 raise_exc=False)
            sdk_exc.raise_from_response(response)
            return response.json()

    def _placement_get(self, url):
        return self._get(url, microversion=PLACEMENT_MICROVERSION, service='placement')

    def _linked(self, url, key, params=None, microversion=COMPUTE_MICROVERSION):
        """Every item of a nova listing, following ``<key>_links`` next links.

        nova returns at most ``[api] max_limit`` items a page and a next
        link while more may follow; only its marker is taken from the link,
        so the listing stays on the configured endpoint.
        """
        params = dict(params or {})
        items, seen = [], set()
        for _page in range(MAX_PAGES):
            body = self._get(url, params, microversion)
            items.extend(body[key])
            marker = _next_marker(body.get(key + '_links'))
            if marker is None:
                return items
            if marker in seen:
                raise exception.IncompleteListing('GET %s: nova repeated the page after %s' % (
                    url, marker))
            seen.add(marker)
            params['marker'] = marker
        raise exception.IncompleteListing('GET %s: more than %d pages' % (url, MAX_PAGES))

    def _offset_paged(self, url, key, params):
        """Every item of a limit/offset listing (os-server-groups): until an empty page."""
        items = []
        for _page in range(MAX_PAGES):
            page = self._get(url, dict(params, offset=len(items)))[key]
            if not page:
                return items
            items.extend(page)
        raise exception.IncompleteListing('GET %s: more than %d pages' % (url, MAX_PAGES))

    def concurrently(self, function, arguments):
        """``{argument: function(argument)}`` with a few requests in flight at once."""
        arguments = list(arguments)
        if len(arguments) <= 1:
            return {argument: function(argument) for argument in arguments}
        with concurrent.futures.ThreadPoolExecutor(CONCURRENT_REQUESTS) as pool:
            return dict(zip(arguments, pool.map(function, arguments), strict=True))

    # -- compute services -------------------------------------------------
    def compute_services(self):
        """Every nova-compute service, read raw: one per host every cycle (architecture.md)."""
        return self._get('/os-services', {'binary': 'nova-compute'})['services']

    def compute_service(self, host):
        with self._sdk('compute', 'GET', '/os-services?host=%s' % host):
            services = list(self._compute.services(binary='nova-compute', host=host))
        return _nova_json(services[0]) if services else None

    def disable_service(self, service_id, reason):
        with self._sdk('compute', 'PUT', '/os-services/%s' % service_id):
            self._compute.disable_service(service_id, disabled_reason=reason)

    def enable_service(self, service_id):
        with self._sdk('compute', 'PUT', '/os-services/%s' % service_id):
            self._compute.enable_service(service_id)

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
        with self._action(server_id, 'os-migrateLive'):
            self._compute.live_migrate_server(server_id, host=host, force=False,
                                              block_migration='auto')

    def cold_migrate(self, server_id, host=None):
        with self._action(server_id, 'migrate'):
            self._compute.migrate_server(server_id, host=host)

    def confirm_resize(self, server_id):
        with self._action(server_id, 'confirmResize'):
            self._compute.confirm_server_resize(server_id)

    def server_migrations(self, server_id):
        """In-progress live migrations of one server."""
        with self._sdk('compute', 'GET', '/servers/%s/migrations' % server_id):
            return [_nova_json(m) for m in self._compute.server_migrations(server_id)]

    def abort_live_migration(self, server_id, migration_id):
        with self._sdk('compute', 'DELETE',
                       '/servers/%s/migrations/%s' % (server_id, migration_id)):
            self._compute.abort_server_migration(migration_id, server_id,
                                                 ignore_missing=False)

    def _action(self, server_id, name):
        return self._sdk('compute', 'POST', '/servers/%s/action %s' % (server_id, name))

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
        with self._sdk('compute', 'GET', '/os-aggregates'):
            return [_nova_json(aggregate) for aggregate in self._compute.aggregates()]

    def server_groups(self):
        return self._offset_paged('/os-server-groups', 'server_groups',
                                  {'all_projects': 'True'})

    def resource_providers(self):
        """{provider uuid: generation} of every resource provider (placement does not page)."""
        return {p['uuid']: p['generation'] for p in
                self._placement_get('/resource_providers')['resource_providers']}

    def provider_usages(self, provider_uuid):
        with self._sdk('placement', 'GET', '/resource_providers/%s/usages' % provider_uuid):
            return placement_usages.provider_usages(self._placement, provider_uuid)

    # -- scaling (nova_drs.scale) -----------------------------------------
    def server(self, server_id):
        with self._sdk('compute', 'GET', '/servers/%s' % server_id):
            return _nova_json(self._compute.get_server(server_id))

    def flavor(self, id_or_name):
        """A flavor by id, else by exact name; None when neither exists."""
        try:
            return self._get('/flavors/%s' % id_or_name)['flavor']
        except exception.NovaRequestFailed as exc:
            if exc.status != 404:
                raise
        for flavor in self._linked('/flavors/detail', 'flavors', {'is_public': 'None'}):
            if flavor['name'] == id_or_name:
                return flavor
        return None

    def resize(self, server_id, flavor_id):
        """Cold resize; nova's scheduler picks the host (no host parameter exists)."""
        with self._action(server_id, 'resize'):
            self._compute.resize_server(server_id, flavor_id)

    def revert_resize(self, server_id):
        with self._action(server_id, 'revertResize'):
            self._compute.revert_server_resize(server_id)

    def provider_inventories(self, provider_uuid):
        return self.provider_inventory_body(provider_uuid)['inventories']

    def provider_inventory_body(self, provider_uuid):
        """The whole inventories body: inventories plus the provider generation."""
        return self._placement_get('/resource_providers/%s/inventories' % provider_uuid)


def _nova_json(resource):
    """An SDK resource as nova/placement sent it: their own attribute names."""
    return resource.to_dict(computed=False, original_names=True)


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
                raise exception.IncompleteListing('next link without a marker: %s' % link['href'])
            return markers[-1]
    return None
