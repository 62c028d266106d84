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

"""The installed ``nova`` and ``openstack`` executables list our commands."""

import os
import subprocess
import sys
import tempfile
import unittest

BIN = os.path.dirname(sys.executable)


def run(*argv):
    # A private stevedore cache: its shared one keys on mtimes with 2-minute
    # resolution and can miss a just-installed entry point.
    env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp())
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)


class TestExecutables(unittest.TestCase):

    def test_nova_help_lists_lb_commands(self):
        result = run(os.path.join(BIN, 'nova'), 'help')
        self.assertEqual(0, result.returncode, result.stderr)
        for command in ('lb-host-list', 'lb-host-show', 'lb-suspend', 'lb-unsuspend',
                        'lb-wake-test', 'lb-rule-list', 'lb-rule-add', 'lb-rule-delete',
                        'lb-plan-show'):
            self.assertIn('    %s ' % command, result.stdout)

    def test_nova_help_of_one_command(self):
        result = run(os.path.join(BIN, 'nova'), 'help', 'lb-suspend')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('usage: nova lb-suspend', result.stdout)
        self.assertIn('--wait', result.stdout)

    def test_openstack_help_lists_drs_commands(self):
        result = run(os.path.join(BIN, 'openstack'), 'help', 'drs')
        self.assertEqual(0, result.returncode, result.stderr)
        for command in ('host list', 'host show', 'host suspend', 'host unsuspend',
                        'host set', 'host wake test', 'rule list', 'rule create',
                        'rule delete', 'plan show', 'plan approve', 'plan reject',
                        'policy list'):
            self.assertIn('drs ' + command, result.stdout)
