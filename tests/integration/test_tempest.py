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

"""Runs nova-drs's tempest plugin (nova_drs/tests/tempest) against the mini-cloud.

tempest comes from PyPI into .venv-cloud; its configuration points at the
mini-cloud's keystone with dynamic credentials, and at the shipped
``redfish`` power driver and the mini-cloud's Redfish BMC (bmc.py), so the
suspend/wake scenario powers real nova-compute processes off and on; and
at the trace driver's metadata (``busy_metadata``), so the daemon-driven
consolidation scenario loads servers through the real statistics pipeline.
The run ends with the invariant check every daemon scenario ends with.
"""

import json
import os
import subprocess

import pytest

from tests.integration import cloud as minicloud
from tests.integration import scenario

pytestmark = pytest.mark.integration

TEMPEST_TIMEOUT = 1200
#: The consolidation scenario repeats what test_daemon.py proves on the same
#: cloud in the same run (+95 s): left out here unless NOVA_DRS_TEMPEST_ALL=1;
#: it stays in the plugin, for devstack gates.
EXCLUDED = None if os.environ.get('NOVA_DRS_TEMPEST_ALL') == '1' else r'test_consolidation'


def _tempest_conf(cloud, path):
    minicloud._write_ini(path, {
        'DEFAULT': {'log_file': os.path.join(cloud.logs, 'tempest.log')},
        'auth': {'use_dynamic_credentials': 'true', 'admin_username': 'admin',
                 'admin_password': minicloud.PASSWORD, 'admin_project_name': 'admin',
                 'admin_domain_name': 'Default'},
        'identity': {'uri_v3': cloud.auth_url, 'auth_version': 'v3',
                     'region': minicloud.REGION},
        'identity-feature-enabled': {'api_v2': 'false'},
        'compute': {'image_ref': cloud.image, 'image_ref_alt': cloud.image,
                    'flavor_ref': cloud.flavor, 'flavor_ref_alt': cloud.flavor,
                    'region': minicloud.REGION, 'build_timeout': '120'},
        'service_available': {'nova': 'true', 'glance': 'true', 'neutron': 'false',
                              'cinder': 'false', 'swift': 'false'},
        # The shipped redfish driver against the mini-cloud's sushy-tools
        # emulator; the scenario puts its host's name in place of {host}.
        'nova_drs': {'power_driver': 'redfish',
                     'power_options': json.dumps(cloud.bmc_options('{host}', 'redfish')),
                     'state_timeout': '240',
                     # The trace driver's metadata: a trace whose load is high
                     # from sample 42 on, scaled to a full vCPU per server.
                     'busy_metadata': json.dumps({
                         'drs_trace': 'planetlab2_cs_uoi_gr_howard_p2psip',
                         'drs_trace_start': '42', 'drs_trace_scale': '4',
                         'drs_trace_since': '{now}'})},
    })


def _failures(output):
    """The failed tests and their tracebacks: the tail of a tempest run is
    the cleanups' request log, which says nothing about what failed."""
    lines = output.splitlines()
    failed = [line for line in lines if line.rstrip().endswith('FAILED')]
    tracebacks = []
    for index, line in enumerate(lines):
        if line.strip() == 'Captured traceback:':
            block = lines[index:index + 60]
            end = next((i for i, text in enumerate(block[2:], 2)
                        if text.strip().startswith('Captured ')), len(block))
            tracebacks.append('\n'.join(block[:end]))
    return '\n'.join(failed + tracebacks)[-8000:] or output[-6000:]


def test_tempest_plugin_passes_against_the_minicloud(cloud, tmp_path):
    workspace = tmp_path / 'tempest'
    tempest = os.path.join(minicloud.BIN, 'tempest')
    # The workspace registry in tmp_path too: nothing written to $HOME.
    subprocess.run([tempest, 'init', '--workspace-path', str(tmp_path / 'workspaces.yaml'),
                    str(workspace)], check=True, capture_output=True)
    _tempest_conf(cloud, str(workspace / 'etc' / 'tempest.conf'))

    command = [tempest, 'run', '--serial', '--regex', r'^nova_drs\.tests\.tempest']
    if EXCLUDED:
        command += ['--exclude-regex', EXCLUDED]
    result = subprocess.run(command, cwd=workspace, capture_output=True, text=True,
                            timeout=TEMPEST_TIMEOUT)

    output = result.stdout + result.stderr
    with open(os.path.join(cloud.logs, 'tempest-run.log'), 'w') as handle:
        handle.write(output)
    assert result.returncode == 0, _failures(output)
    assert 'Failed: 0' in output and 'Passed: 0' not in output, output[-3000:]
    assert 'Skipped: 0' in output, 'a tempest test was skipped:\n' + output[-3000:]
    # The same end as every daemon scenario: nothing lost, DRS and nova agree.
    scenario.check_invariants(cloud, scenario.compute_client(cloud))
