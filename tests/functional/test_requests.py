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

"""A wake test's outcome read back: ``GET /loadbalancer/requests/{id}``,
``openstack drs request show``, ``nova lb-request-show`` and ``--wait``."""

import json

from nova_drs.db import requests as db_requests
from tests.functional import test_cli_nova
from tests.functional import test_cli_openstack


class TestWakeTestRequests(test_cli_openstack.OpenStackShellMixin, test_cli_nova.CliTestCase):

    def wake_test_done(self, host='host1'):
        """A wake test the daemon has finished (its result text written)."""
        request, _ = db_requests.add(self.drs_db, host, 'wake_test', 'admin')
        db_requests.update(self.drs_db, request['id'], 'pending', 'done',
                           'suspended in 12 s, woken in 48 s')
        return request['id']

    def test_a_wake_test_is_read_back_by_id(self):
        request_id = self.wake_test_done()
        response = self.admin_api.api_request('/loadbalancer/requests/%d' % request_id,
                                              method='GET', check_response_status=None)
        self.assertEqual(200, response.status_code, response.text)
        request = response.json()['request']
        self.assertEqual(('host1', 'wake_test', 'done', 'suspended in 12 s, woken in 48 s'),
                         (request['host'], request['action'], request['status'],
                          request['result']))
        response = self.admin_api.api_request('/loadbalancer/requests/4242', method='GET',
                                              check_response_status=None)
        self.assertEqual(404, response.status_code)
        self.assertIn('request 4242 not found', response.text)

    def test_openstack_drs_request_show_and_wake_test_wait(self):
        request_id = self.wake_test_done()
        code, out, err = self.openstack('drs', 'request', 'show', str(request_id), '-f', 'json')
        self.assertEqual(0, code, err)
        shown = json.loads(out)
        self.assertEqual(('done', 'suspended in 12 s, woken in 48 s'),
                         (shown['status'], shown['result']))
        # No daemon here: --wait polls the new request and gives up in time.
        code, out, err = self.openstack('drs', 'host', 'wake', 'test', 'host3', '--wait',
                                        '--poll-interval', '0.1', '--timeout', '0.3')
        self.assertEqual(1, code)
        self.assertIn('timed out', err)



class TestWakeTestRequestsNovaShell(test_cli_nova.CliTestCase):

    nova = test_cli_nova.TestNovaShell.nova
    wake_test_done = TestWakeTestRequests.wake_test_done

    def test_nova_lb_request_show(self):
        request_id = self.wake_test_done()
        code, out, err = self.nova('lb-request-show', str(request_id))
        self.assertEqual(0, code, err)
        self.assertIn('suspended in 12 s, woken in 48 s', out)
        code, out, err = self.nova('lb-wake-test', 'host2')
        self.assertEqual(0, code, err)
        self.assertIn('follow with: nova lb-request-show', out)
