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

"""Rules safe (issue 26): a rule the API refuses never reaches the daemon, and a
bad rule written to the database some other way disables that rule, not the cycle."""

from nova_drs.db import models
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle


class TestStoredRules(test_daemon_cycle.DaemonTestBase):

    def add_rule(self, value, rule_type='host', allow=False):
        with self.drs_db.writer() as session:
            row = models.LbRule(type=rule_type, value=value, allow=allow)
            session.add(row)
            session.flush()
            return row.id

    def test_bad_stored_rule_is_disabled_with_one_warning_and_the_cycle_runs(self):
        broken = self.add_rule('compute[0-9')          # does not compile
        catastrophic = self.add_rule('(a+)+$')         # exponential backtracking
        self.add_rule('host1')                         # valid: host1 is never touched
        daemon_support.record_load(self.drs_db, {h: 10.0 for h in self.COMPUTE_HOSTS}, {})

        for _ in range(2):
            summary = self.cycle()
            self.assertNotIn('skipped', summary)
            self.assertNotIn('error', summary)

        log = self.stdlog.logger.output
        for rule_id in (broken, catastrophic):
            self.assertEqual(1, log.count('rule %d (host ' % rule_id), log)
        self.assertIn('disabled: invalid regular expression', log)
        self.assertIn('can take exponential time', log)
        rules = self.balancer._rules()
        self.assertFalse(rules.deciding('host1', [])['allow'])     # the valid deny rule
        self.assertIsNone(rules.deciding('host2', []))              # the rest disabled
