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

"""Base class of the nova-drs tempest tests: admin and non-admin clients."""

from tempest import config
from tempest import test

from nova_drs.tests.tempest.services import loadbalancer_client

CONF = config.CONF


class LoadBalancerTest(test.BaseTestCase):
    """Needs nova (compute) with the drs_loadbalancer filter in its pipeline."""

    credentials = ['admin', 'primary']
    #: Scenarios that suspend and wake hosts need ``[nova_drs] power_driver``.
    needs_power_driver = False

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.service_available.nova:
            raise cls.skipException('nova is not available')
        if cls.needs_power_driver and not CONF.nova_drs.power_driver:
            raise cls.skipException('[nova_drs] power_driver is not set')

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
