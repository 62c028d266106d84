"""Base class of the nova-drs tempest tests: admin and non-admin clients."""

from tempest import config
from tempest import test

from nova_drs.tests.tempest.services import loadbalancer_client

CONF = config.CONF


class LoadBalancerTest(test.BaseTestCase):
    """Needs nova (compute) with the drs_loadbalancer filter in its pipeline."""

    credentials = ['admin', 'primary']

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.service_available.nova:
            raise cls.skipException('nova is not available')

    @classmethod
    def _lb_client(cls, manager):
        return loadbalancer_client.LoadBalancerClient(
            manager.auth_provider, CONF.compute.catalog_type, CONF.compute.region
            or CONF.identity.region, endpoint_type=CONF.compute.endpoint_type)

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.admin_lb = cls._lb_client(cls.os_admin)
        cls.lb = cls._lb_client(cls.os_primary)
        cls.admin_services = cls.os_admin.services_client
        cls.admin_servers = cls.os_admin.servers_client
