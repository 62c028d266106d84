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

"""The nova-drs API on nova-api alone: no conductor, scheduler or compute runs.

Most API and CLI tests create no server, yet the full cloud of
base.DrsFunctionalTestCase boots three computes, a conductor and a
scheduler for each of them (~3.4 s a test). What the API needs is nova-api's
real WSGI stack (nova's paste pipeline from etc/nova-drs/api-paste.ini, its
policy, microversions and fault wrapping, in-process as nova's OSAPIFixture
serves it) and what it reads about hosts: the nova-compute service and
compute node rows of the cell database (nova_drs.api.nova_hosts), the host
mappings, the aggregates, and each node's provider in placement (the
``allocation`` of ``GET /loadbalancer/{host}``). DrsApiTestCase writes those
the way nova-compute does when it starts: its service record, then its
resource tracker's first audit of the same fake driver, which creates the
compute node and reports its inventory to placement. Nothing keeps running.
"""

import json

from nova import context as nova_context
from nova import objects
from nova import test
from nova.compute import resource_tracker
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import fixtures as func_fixtures
from nova.virt import driver as virt_driver

from tests.functional import base


class ApiCallsMixin:
    """Raw calls that return (status, decoded body) whatever the status."""

    def call(self, api, method, path, body=None, raw=None):
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        response = api.api_request(path, method=method, body=data,
                                   check_response_status=None)
        decoded = response.json() if response.content else None
        return response.status_code, decoded

    def assertFault(self, expected_status, result, fragment=None):
        status, body = result
        self.assertEqual(expected_status, status, body)
        (name, fault), = body.items()
        self.assertEqual(expected_status, fault['code'])
        self.assertTrue(fault['message'])
        if fragment is not None:
            self.assertIn(fragment, fault['message'])
        return name


class DrsApiTestCase(ApiCallsMixin, base.DrsSetupMixin, test.TestCase):
    """nova-api with nova-drs enabled; COMPUTE_HOSTS known to nova, none running.

    The identities and microversion are _IntegratedTestBase's with ADMIN_API:
    ``self.api`` is the admin at the latest microversion.
    """

    REQUIRES_LOCKING = False

    def setUp(self):
        super().setUp()
        self.placement_fixture = self.useFixture(func_fixtures.PlacementFixture())
        self.useFixture(nova_fixtures.RealPolicyFixture())
        self.notifier = self.useFixture(nova_fixtures.NotificationFixture(self))
        for host in self.COMPUTE_HOSTS:
            self._register_compute(host)
        self.api_fixture = self.useFixture(nova_fixtures.OSAPIFixture(api_version='v2.1'))
        self.admin_api = self.api = self.api_fixture.admin_api
        self.api.microversion = 'latest'

    def _register_compute(self, host):
        """What nova-compute on ``host`` leaves in nova's databases and placement
        once started: nova.service's service record, ComputeManager.pre_start_hook's
        first resource audit (compute node, provider and inventory), and the
        mapped node and host mapping of nova's TestCase.start_service."""
        admin = nova_context.get_admin_context()
        cell = self.cell_mappings[test.CELL1_NAME]
        with nova_context.target_cell(admin, cell) as context:
            service = objects.Service(context, host=host, binary='nova-compute',
                                      topic='compute', report_count=0)
            service.create()
            driver = virt_driver.load_compute_driver(None, self.COMPUTE_DRIVER)
            driver.init_host(host)
            tracker = resource_tracker.ResourceTracker(host, driver)
            tracker.set_service_ref(service)
            tracker.update_available_resource(context, host, startup=True)
            node = tracker.compute_nodes[host]
            node.mapped = 1
            node.save()
        self.host_mappings[host] = objects.HostMapping(admin, host=host, cell_mapping=cell)
        self.host_mappings[host].create()


class ServersApiTestCase(ApiCallsMixin, base.DrsFunctionalTestCase):
    """The same calls on the full cloud, for the tests whose requests need servers."""
