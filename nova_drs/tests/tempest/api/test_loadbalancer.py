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

"""API tests of /loadbalancer: what admins see, what others are refused."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_drs.tests.tempest import base


class LoadBalancerHostsTest(base.LoadBalancerTest):

    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8a01')
    def test_list_hosts_covers_every_compute_service(self):
        services = self.admin_services.list_services(binary='nova-compute')['services']
        hosts = self.admin_lb.list_hosts()['hosts']

        self.assertEqual(sorted(s['host'] for s in services),
                         sorted(h['host'] for h in hosts))
        for host in hosts:
            self.assertIn(host['suspend_state'],
                          ('active', 'suspending', 'suspended', 'waking', 'error'))
            self.assertNotIn('power_options', host)

    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8a02')
    def test_show_host(self):
        first = self.admin_lb.list_hosts()['hosts'][0]['host']

        self.assertEqual(first, self.admin_lb.show_host(first)['host']['host'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8a03')
    def test_unknown_host_is_404(self):
        self.assertRaises(lib_exc.NotFound, self.admin_lb.show_host, 'no-such-host')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8a04')
    def test_non_admin_is_forbidden(self):
        host = self.admin_lb.list_hosts()['hosts'][0]['host']

        self.assertRaises(lib_exc.Forbidden, self.lb.list_hosts)
        self.assertRaises(lib_exc.Forbidden, self.lb.host_action, 'suspend_host', host=host)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8a05')
    def test_unknown_action_is_400(self):
        host = self.admin_lb.list_hosts()['hosts'][0]['host']

        self.assertRaises(lib_exc.BadRequest, self.admin_lb.host_action, 'explode', host=host)
