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

"""API tests of /loadbalancer/rules: admins keep hosts out of consolidation."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_drs.tests.tempest import base


class LoadBalancerRulesTest(base.LoadBalancerTest):

    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8c01')
    def test_deny_rule_lifecycle(self):
        host = self.admin_lb.list_hosts()['hosts'][0]['host']
        rule = self.admin_lb.create_rule('host', '^%s$' % host, False)['rule']
        self.addCleanup(self._delete_quietly, rule['id'])

        self.assertEqual(('host', '^%s$' % host, False),
                         (rule['type'], rule['value'], rule['allow']))
        self.assertIn(rule['id'], [r['id'] for r in self.admin_lb.list_rules()['rules']])
        self.assertEqual(rule['id'], self.admin_lb.show_rule(rule['id'])['rule']['id'])

        self.admin_lb.delete_rule(rule['id'])
        self.assertRaises(lib_exc.NotFound, self.admin_lb.show_rule, rule['id'])

    def _delete_quietly(self, rule_id):
        try:
            self.admin_lb.delete_rule(rule_id)
        except lib_exc.NotFound:
            pass

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8c02')
    def test_rule_with_broken_regex_is_400(self):
        self.assertRaises(lib_exc.BadRequest, self.admin_lb.create_rule, 'host', '(', True)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('6f1c9a52-0d0e-4a77-9a0e-3d1f7c2b8c03')
    def test_non_admin_cannot_create_rules(self):
        self.assertRaises(lib_exc.Forbidden, self.lb.create_rule, 'host', '.*', False)
