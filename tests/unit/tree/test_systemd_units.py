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

"""The shipped systemd units (etc/systemd) start the daemons exactly as the
devstack plugin does (which the mini-cloud runs); that systemd-analyze finds
them valid is tests/component/tree/test_systemd_units.py."""

import configparser
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
UNITS = os.path.join(ROOT, 'etc', 'systemd')
NAMES = ('nova-loadbalancer', 'nova-drs-collector')
INSTALLED_BIN = '/usr/local/bin'


def _exec_start(name):
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read(os.path.join(UNITS, name + '.service'))
    return parser['Service']['ExecStart']


def test_units_start_the_daemons_as_the_devstack_plugin_does(tmp_path):
    """The devstack plugin's start_nova_drs, with devstack's default paths, runs
    the same command lines as the units' ExecStart."""
    script = '''
        set -e
        NOVA_CONF=/etc/nova/nova.conf NOVA_DRS_CONF_DIR=/etc/nova-drs
        NOVA_DRS_BIN_DIR=%s
        is_service_enabled() { return 0; }
        run_process() { printf '%%s=%%s\\n' "$1" "$2"; }
        source %s
        start_nova_drs
    ''' % (INSTALLED_BIN, os.path.join(ROOT, 'devstack', 'lib', 'nova-drs.sh'))
    result = subprocess.run(['bash', '-c', script], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    started = dict(line.split('=', 1) for line in result.stdout.splitlines())
    assert started == {name: _exec_start(name) for name in NAMES}
