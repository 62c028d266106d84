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

"""Scenario: an admin suspends a host; its servers move, it powers off; unsuspend wakes it.

Needs the nova-loadbalancer daemon and a power driver able to act on the
hosts (``[nova_drs] power_driver``; skipped when unset, since suspending a
host of a shared cloud needs the operator's consent).
"""

import json
import time

from tempest import config
from tempest.api.compute import api_microversion_fixture
from tempest.common import waiters
from tempest.lib import decorators
from tempest.lib.common.utils import data_utils

from nova_drs.tests.tempest import base

CONF = config.CONF


class SuspendWakeScenarioTest(base.LoadBalancerTest):

    needs_power_driver = True

    def setUp(self):
        super().setUp()
        # 2.37: networks "none" (boot without any network).
        self.useFixture(api_microversion_fixture.APIMicroversionFixture(
            compute_microversion='2.37'))

    def _wait_state(self, host, wanted):
        deadline = time.monotonic() + CONF.nova_drs.state_timeout
        state = None
        while time.monotonic() < deadline:
            state = self.admin_lb.show_host(host)['host']
            if state['suspend_state'] == wanted:
                return state
            self.assertNotEqual('error', state['suspend_state'],
                                'host %s went to error: %s' % (host, state['state_reason']))
            time.sleep(3)
        self.fail('host %s did not reach %s within %ds (last: %s); is nova-loadbalancer '
                  'running?' % (host, wanted, CONF.nova_drs.state_timeout, state))

    def _boot(self):
        server = self.admin_servers.create_server(
            name=data_utils.rand_name('drs'), imageRef=CONF.compute.image_ref,
            flavorRef=CONF.compute.flavor_ref, networks='none')['server']
        self.addCleanup(self.admin_servers.delete_server, server['id'])
        waiters.wait_for_server_status(self.admin_servers, server['id'], 'ACTIVE')
        return self.admin_servers.show_server(server['id'])['server']

    @decorators.attr(type=['slow'])
    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8b01')
    def test_suspend_moves_servers_then_unsuspend_wakes(self):
        server = self._boot()
        host = server['OS-EXT-SRV-ATTR:host']
        self.admin_lb.host_action('set_power', expected=200, host=host,
                                  driver=CONF.nova_drs.power_driver,
                                  mode=CONF.nova_drs.power_mode,
                                  options=json.loads(
                                      CONF.nova_drs.power_options.replace('{host}', host)))

        self.admin_lb.host_action('suspend_host', host=host)
        self._wait_state(host, 'suspended')

        moved = self.admin_servers.show_server(server['id'])['server']
        self.assertEqual('ACTIVE', moved['status'])
        self.assertNotEqual(host, moved['OS-EXT-SRV-ATTR:host'])
        newcomer = self._boot()
        self.assertNotEqual(host, newcomer['OS-EXT-SRV-ATTR:host'])

        self.admin_lb.host_action('unsuspend_host', host=host)
        self._wait_state(host, 'active')
        service = self.admin_services.list_services(binary='nova-compute',
                                                    host=host)['services'][0]
        self.assertEqual(('up', 'enabled'), (service['state'], service['status']))
