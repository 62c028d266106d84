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

"""The devstack plugin's config functions work (bash, with stand-ins for its tools).

That its shell is shellcheck-clean is tests/component/test_devstack_shellcheck.py.
"""

import glob
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVSTACK = os.path.join(ROOT, 'devstack')
SCRIPTS = sorted(glob.glob(os.path.join(DEVSTACK, '*.sh'))
                 + glob.glob(os.path.join(DEVSTACK, 'lib', '*.sh'))
                 + [os.path.join(DEVSTACK, 'settings')])


def test_there_are_scripts_to_check():
    names = {os.path.relpath(path, DEVSTACK) for path in SCRIPTS}
    assert {'plugin.sh', 'settings', 'lib/shim.sh', 'lib/nova-drs.sh'} <= names


def _run_plugin(tmp_path, functions, **env):
    script = 'set -euo pipefail\nsource devstack/lib/shim.sh\nsource devstack/lib/nova-drs.sh\n'
    full_env = dict(os.environ, NOVA_DRS_DIR=ROOT, NOVA_CONF=str(tmp_path / 'nova.conf'),
                    NOVA_API_PASTE_INI=str(tmp_path / 'api-paste.ini'),
                    NOVA_DRS_CONF_DIR=str(tmp_path / 'drs'),
                    NOVA_DRS_STATE_PATH=str(tmp_path / 'state'), NOVA_DRS_DB_NAME='drs_db',
                    NOVA_DRS_LB_PERIOD='30', NOVA_DRS_REQUEST_TIMEOUT='45',
                    NOVA_DRS_AUTH_URL='http://127.0.0.1:5000/v3',
                    NOVA_DRS_AUTH_USERNAME='nova', NOVA_DRS_AUTH_PASSWORD='pa|ss&wo\\rd',
                    NOVA_DRS_AUTH_PROJECT_NAME='service', NOVA_DRS_AUTH_DOMAIN_NAME='Default',
                    NOVA_DRS_REGION_NAME='RegionOne', **env)
    return subprocess.run(['bash', '-c', script + '\n'.join(functions)], cwd=ROOT,
                          env=full_env, capture_output=True, text=True)


NOVA_PASTE = """[composite:openstack_compute_api_v21]
use = call:nova.api.auth:pipeline_factory_v21
keystone = cors authtoken keystonecontext osapi_compute_app_v21

[composite:openstack_compute_api_v21_legacy_v2_compatible]
use = call:nova.api.auth:pipeline_factory_v21
keystone = cors authtoken keystonecontext legacy_v2_compatible osapi_compute_app_v21

[filter:keystonecontext]
paste.filter_factory = nova.api.auth:NovaKeystoneContext.factory
"""


def _read_ini(path):
    import configparser
    parser = configparser.RawConfigParser(strict=True)
    parser.read(path)
    return parser


def test_configure_edits_nova_conf_paste_and_credentials(tmp_path):
    (tmp_path / 'api-paste.ini').write_text(NOVA_PASTE)
    (tmp_path / 'nova.conf').write_text('[DEFAULT]\ndebug = true\n')

    for _ in range(2):  # idempotent: a second run changes nothing more
        result = _run_plugin(tmp_path, ['configure_nova_drs'])
        assert result.returncode == 0, result.stderr

    paste = _read_ini(tmp_path / 'api-paste.ini')
    assert paste['composite:openstack_compute_api_v21']['keystone'] == (
        'cors authtoken keystonecontext drs_loadbalancer osapi_compute_app_v21')
    assert paste['composite:openstack_compute_api_v21_legacy_v2_compatible']['keystone'] == (
        'cors authtoken keystonecontext drs_loadbalancer legacy_v2_compatible '
        'osapi_compute_app_v21')
    assert paste['filter:drs_loadbalancer']['paste.filter_factory'] == (
        'nova_drs.api.middleware:LoadBalancerMiddleware.factory')
    nova = _read_ini(tmp_path / 'nova.conf')
    assert nova['DEFAULT']['debug'] == 'true'
    assert nova['DEFAULT']['compute_monitors'] == 'cpu.drs'
    assert 'SuspendStateFilter' in nova['filter_scheduler']['enabled_filters']
    assert 'MigrationLimitFilter' in nova['filter_scheduler']['enabled_filters']
    assert nova['filter_scheduler']['weight_classes'] == (
        'nova.scheduler.weights.all_weighers,nova_drs.weights.drs_weighers')
    assert nova['drs']['state_path'] == str(tmp_path / 'state')
    assert nova['drs_database']['connection'].startswith('mysql+pymysql://')
    assert nova['drs_database']['connection'].split('/')[-1].startswith('drs_db')
    drs = _read_ini(tmp_path / 'drs' / 'nova-drs.conf')
    assert drs['drs_auth']['password'] == 'pa|ss&wo\\rd'
    assert drs['drs_auth']['auth_url'] == 'http://127.0.0.1:5000/v3'
    assert drs['loadbalancer']['period'] == '30'
    assert drs['drs_auth']['timeout'] == '45'
    assert oct((tmp_path / 'drs' / 'nova-drs.conf').stat().st_mode & 0o777) == '0o600'
    # Power secrets: nova-api seals with the public key; the private key is in
    # the daemon's file only, mode 0600, and the two are one pair.
    from nova_drs.power import sealing
    public = nova['drs_power']['seal_public_key_file']
    private = drs['drs_power']['unseal_private_key_files']
    assert 'unseal_private_key_files' not in nova['drs_power']
    assert oct(os.stat(private).st_mode & 0o777) == '0o600'
    assert set(sealing.Unsealer.from_files([private]).keys) == {
        sealing.Sealer.from_file(public).key_id}


def test_unconfigure_paste_restores_nova_pipelines(tmp_path):
    (tmp_path / 'api-paste.ini').write_text(NOVA_PASTE)
    result = _run_plugin(tmp_path, ['configure_nova_drs_api_paste "$NOVA_API_PASTE_INI"',
                                    'unconfigure_nova_drs_api_paste "$NOVA_API_PASTE_INI"'])
    assert result.returncode == 0, result.stderr

    paste = _read_ini(tmp_path / 'api-paste.ini')
    assert 'filter:drs_loadbalancer' not in paste
    assert paste['composite:openstack_compute_api_v21']['keystone'] == (
        'cors authtoken keystonecontext osapi_compute_app_v21')


def test_paste_without_keystonecontext_is_refused_clearly(tmp_path):
    (tmp_path / 'api-paste.ini').write_text(NOVA_PASTE.replace('keystonecontext ', ''))
    result = _run_plugin(tmp_path, ['configure_nova_drs_api_paste "$NOVA_API_PASTE_INI"'])

    assert result.returncode != 0
    assert 'no keystonecontext' in result.stderr


def test_clean_undoes_configure(tmp_path):
    """clean: paste filter, nova.conf sections, daemon file, state, database, .pth gone."""
    (tmp_path / 'api-paste.ini').write_text(NOVA_PASTE)
    (tmp_path / 'nova.conf').write_text('[DEFAULT]\ndebug = true\n')
    site = tmp_path / 'site-packages'
    site.mkdir()
    (site / 'nova_drs-monitor.pth').write_text('import os\n')
    fake_python = tmp_path / 'python'
    fake_python.write_text('#!/bin/sh\necho %s\n' % site)
    fake_python.chmod(0o755)
    calls = tmp_path / 'mysql-calls'
    fake_bin = tmp_path / 'bin'
    fake_bin.mkdir()
    (fake_bin / 'mysql').write_text('#!/bin/sh\necho "$@" >> %s\n' % calls)
    (fake_bin / 'mysql').chmod(0o755)
    env = {'NOVA_DRS_PYTHON': str(fake_python),
           'PATH': '%s:%s' % (fake_bin, os.environ['PATH'])}

    result = _run_plugin(tmp_path, ['configure_nova_drs', 'cleanup_nova_drs'], **env)

    assert result.returncode == 0, result.stderr
    assert (tmp_path / 'api-paste.ini').read_text().strip() == NOVA_PASTE.strip()
    nova = _read_ini(tmp_path / 'nova.conf')
    assert set(nova.sections()) <= {'filter_scheduler', 'notifications',
                                    'oslo_messaging_notifications'}
    assert dict(nova['DEFAULT']) == {'debug': 'true'}
    assert not nova.has_option('filter_scheduler', 'enabled_filters')
    assert not nova.has_option('notifications', 'notification_format')
    assert not nova.has_option('oslo_messaging_notifications', 'driver')
    assert not (tmp_path / 'drs' / 'nova-drs.conf').exists()
    assert not (tmp_path / 'drs' / 'power-seal.key').exists()
    assert not (tmp_path / 'state').exists()
    assert not (site / 'nova_drs-monitor.pth').exists()
    assert 'DROP DATABASE IF EXISTS `drs_db`' in calls.read_text()
