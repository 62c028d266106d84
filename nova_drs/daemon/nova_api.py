"""The daemon's view of nova and placement: their REST APIs, nothing else.

The daemon never reads nova's database (the 2015 implementation did). Every
call goes through a keystoneauth Adapter, so credentials come from the
``[drs_auth]`` config group, never from code.
"""

import logging

from keystoneauth1 import exceptions as ks_exc

from nova_drs.observability import metrics

LOG = logging.getLogger(__name__)

COMPUTE_MICROVERSION = '2.95'
PLACEMENT_MICROVERSION = '1.39'


class NovaUnavailable(Exception):
    """nova or placement could not answer; the cycle must not act on half a view."""


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

    def _call(self, adapter, method, url, microversion, body=None):
        metrics.count_request(getattr(adapter, 'service_type', None) or 'unknown', method)
        try:
            response = adapter.request(url, method, json=body, microversion=microversion,
                                       raise_exc=False)
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

    def compute(self, method, url, body=None):
        return self._call(self._compute, method, url, COMPUTE_MICROVERSION, body)

    def placement(self, method, url, body=None):
        return self._call(self._placement, method, url, PLACEMENT_MICROVERSION, body)

    # -- compute services -------------------------------------------------
    def compute_services(self):
        return self.compute('GET', '/os-services?binary=nova-compute')['services']

    def compute_service(self, host):
        services = self.compute(
            'GET', '/os-services?binary=nova-compute&host=%s' % host)['services']
        return services[0] if services else None

    def disable_service(self, service_id, reason):
        self.compute('PUT', '/os-services/%s' % service_id,
                     {'status': 'disabled', 'disabled_reason': reason})

    def enable_service(self, service_id):
        self.compute('PUT', '/os-services/%s' % service_id, {'status': 'enabled'})

    # -- servers ----------------------------------------------------------
    def _servers(self, query=''):
        servers, marker = [], None
        while True:
            url = '/servers/detail?all_tenants=1&limit=1000' + query
            if marker:
                url += '&marker=%s' % marker
            page = self.compute('GET', url)['servers']
            servers.extend(page)
            if len(page) < 1000:
                return servers
            marker = page[-1]['id']

    def servers_on_host(self, host):
        """Every server nova places on ``host``, whatever its state."""
        return self._servers('&host=%s' % host)

    def all_servers(self):
        return self._servers()

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
        """nova's migration records, filtered by instance_uuid, source_compute,
        status, migration_type (the os-migrations query parameters)."""
        query = '&'.join('%s=%s' % item for item in sorted(filters.items()))
        return self.compute('GET', '/os-migrations' + ('?' + query if query else ''))[
            'migrations']

    # -- inventory --------------------------------------------------------
    def hypervisors(self):
        # 2.53: uuids and service host; from 2.88 on, the detail view asks
        # every compute for its uptime over RPC, which we never need.
        return self._call(self._compute, 'GET', '/os-hypervisors/detail', '2.53')[
            'hypervisors']

    def aggregates(self):
        return self.compute('GET', '/os-aggregates')['aggregates']

    def server_groups(self):
        return self.compute('GET', '/os-server-groups?all_projects=True')['server_groups']

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
        for flavor in self.compute('GET', '/flavors/detail?is_public=None')['flavors']:
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
