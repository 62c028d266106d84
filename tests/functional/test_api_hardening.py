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

"""Issue 17's API reproductions: each was a 500 (or a 200) on nova-drs 0.x; nova answers 4xx."""

import io
import json

import fixtures
from nova import context as nova_context
from oslo_middleware import sizelimit
import webob
import webob.exc

from nova_drs.api import middleware
from tests.functional import api_base

# nova's [oslo_middleware] max_request_body_size default.
MAX_BODY = 114688


class TestHardening(api_base.DrsApiTestCase):

    def non_admins(self):
        return (self.api_fixture.api, self.api_fixture.reader_api, self.api_fixture.other_api)

    def assertForbiddenThenUndecodable(self, path):
        """GET ``path`` (not UTF-8 once decoded) is refused to non-admins by the
        policy (403) before anything reads it, and to the admin as invalid (400)."""
        for api in self.non_admins():
            with self.subTest(roles=api.roles):
                self.assertFault(403, self.call(api, 'GET', path))
        self.assertFault(400, self.call(self.admin_api, 'GET', path), 'not valid UTF-8')

    def test_lone_surrogate_in_a_rule_value_is_400(self):
        for value in ('\\ud800', 'a\\udfffb', '\\udc80.*'):
            raw = '{"rule": {"type": "host", "value": "%s", "allow": true}}' % value
            with self.subTest(value=value):
                self.assertFault(400, self.call(self.admin_api, 'POST', '/loadbalancer/rules',
                                                raw=raw), 'printable')
        self.assertEqual([], self.call(self.admin_api, 'GET', '/loadbalancer/rules')[1]['rules'])

    def test_control_characters_and_surrogates_in_a_host_are_400(self):
        for raw in ('{"suspend_host": {"host": "host1\\u0000"}}',
                    '{"suspend_host": {"host": "\\ud800"}}',
                    '{"unsuspend_host": {"host": "ho\\u0007st"}}',
                    '{"wake_test": {"host": "host1\\n"}}'):
            with self.subTest(raw=raw):
                self.assertFault(400, self.call(self.admin_api, 'POST', '/loadbalancer/action',
                                                raw=raw), 'printable')

    def test_non_ascii_digits_and_huge_ids_are_404(self):
        for text in ('\u00b2', '\u2460', '\u0663', '9' * 5000, '0', str(2 ** 31)):
            for path in ('/loadbalancer/requests/', '/loadbalancer/rules/'):
                with self.subTest(path=path, id=text[:10]):
                    self.assertFault(404, self.call(self.admin_api, 'GET', path + text),
                                     'not found')
            with self.subTest(method='DELETE', id=text[:10]):
                self.assertFault(404, self.call(self.admin_api, 'DELETE',
                                                '/loadbalancer/rules/' + text))

    def test_undecodable_query_is_403_before_anything_then_400(self):
        self.assertForbiddenThenUndecodable('/loadbalancer/plan?cluster=%FF')

    def test_query_parameters_are_validated(self):
        self.assertFault(400, self.call(self.admin_api, 'GET',
                                        '/loadbalancer/plan?cluster=a&cluster=b'), 'at most 1')
        self.assertFault(400, self.call(self.admin_api, 'GET', '/loadbalancer/plan?cluster=%01'),
                         'printable')
        self.assertFault(400, self.call(self.admin_api, 'GET', '/loadbalancer?limit=1'),
                         'limit')
        self.assertEqual(200, self.call(self.admin_api, 'GET', '/loadbalancer/plan?cluster=x')[0])

    def test_undecodable_or_unprintable_host_path_is_400_after_the_policy(self):
        self.assertForbiddenThenUndecodable('/loadbalancer/%FF')
        self.assertFault(400, self.call(self.admin_api, 'GET', '/loadbalancer/host1%01'),
                         'printable')
        self.assertFault(400, self.call(self.admin_api, 'GET', '/loadbalancer/' + 'h' * 256),
                         'too long')

    def chunked_post(self, path, size, roles=('reader', 'member', 'admin')):
        """A chunked POST through nova's sizelimit filter and ours, as a WSGI server
        that supports chunked bodies (eventlet, uwsgi) hands it over; the test
        client cannot send one (wsgi-intercept does not decode chunks)."""
        stack = sizelimit.RequestBodySizeLimiter(
            middleware.LoadBalancerMiddleware(webob.exc.HTTPNotImplemented()))
        context = nova_context.RequestContext('admin', self.admin_api.project_id,
                                              roles=list(roles))
        request = webob.Request.blank(path, method='POST', environ={
            'wsgi.input': io.BytesIO(b' ' * (size - 2) + b'{}'),
            'wsgi.input_terminated': True, 'HTTP_TRANSFER_ENCODING': 'chunked',
            'nova.context': context})
        request.environ.pop('CONTENT_LENGTH', None)
        response = request.get_response(stack)
        return response.status_int, response.json

    def test_chunked_body_over_novas_limit_is_413(self):
        for path in ('/loadbalancer/action', '/loadbalancer/rules', '/loadbalancer/plan/action'):
            with self.subTest(path=path):
                name = self.assertFault(413, self.chunked_post(path, MAX_BODY + 1))
                self.assertEqual('overLimit', name)
        # Under the limit the body is read and validated as usual.
        self.assertFault(400, self.chunked_post('/loadbalancer/action', MAX_BODY),
                         'exactly one action')
        # Without the right to post there, a caller learns nothing: 403 before reading.
        self.assertFault(403, self.chunked_post('/loadbalancer/action', MAX_BODY + 1,
                                                roles=('member',)))

    def test_body_over_novas_limit_with_a_length_is_413(self):
        raw = json.dumps({'rule': {'type': 'host', 'value': 'x' * MAX_BODY, 'allow': True}})
        response = self.admin_api.api_request('/loadbalancer/rules', method='POST', body=raw,
                                              check_response_status=None)
        self.assertEqual(413, response.status_code)

    def version_call(self, header, path='/loadbalancer'):
        self.admin_api.microversion = header.split(' ', 1)[1]
        return self.admin_api.api_request(path, method='GET', check_response_status=None)

    def test_microversion_out_of_range_is_406_and_malformed_is_400(self):
        response = self.version_call('compute 99.0')
        self.assertEqual(406, response.status_code, response.text)
        self.assertIn('99.0', response.json()['computeFault']['message'])
        response = self.version_call('compute foo')
        self.assertEqual(400, response.status_code, response.text)
        self.assertIn('foo', response.json()['badRequest']['message'])
        # The same answers as nova's own routes.
        self.assertEqual(406, self.version_call('compute 99.0', '/os-services').status_code)
        self.assertEqual(400, self.version_call('compute foo', '/os-services').status_code)

    def test_negotiated_microversion_is_echoed_like_nova(self):
        response = self.version_call('compute 2.1')
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual('compute 2.1', response.headers['OpenStack-API-Version'])
        self.assertIn('OpenStack-API-Version', response.headers['Vary'])
        response = self.version_call('compute latest')
        self.assertEqual(200, response.status_code)
        self.assertNotEqual('compute 2.1', response.headers['OpenStack-API-Version'])

    def test_legacy_v2_has_no_microversions_like_nova(self):
        project = self.admin_api.project_id
        url = self.admin_api.base_url.replace('/v2.1', '/v2/%s' % project) + '/loadbalancer'
        response = self.admin_api.request(url, headers={
            'X-Auth-User': 'admin', 'X-Auth-Project-Id': project,
            'X-Roles': 'reader,member,admin', 'OpenStack-API-Version': 'compute 99.0'})
        self.assertEqual(200, response.status_code, response.text)
        self.assertNotIn('OpenStack-API-Version', response.headers)

    def test_real_bug_is_a_logged_clean_500(self):
        def broken(*args, **kwargs):
            raise RuntimeError('simulated bug')

        self.useFixture(fixtures.MonkeyPatch('nova_drs.api.rules.RulesController.list', broken))
        status, body = self.call(self.admin_api, 'GET', '/loadbalancer/rules')
        self.assertEqual(500, status)
        self.assertEqual(500, body['computeFault']['code'])
        self.assertNotIn('simulated bug', body['computeFault']['message'])
        self.assertIn('simulated bug', self.stdlog.logger.output)

