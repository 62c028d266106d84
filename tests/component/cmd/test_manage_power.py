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

"""Clear-text power secrets from before sealing, on real MariaDB: ``db sync`` and
``nova-drs-manage power seal`` seal them, ``power reseal`` rotates the key, and
the daemon refuses to start without the key they are sealed for."""

import json
import os
import subprocess
import sys

import pytest

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.cmd import manage
from nova_drs.daemon import power as daemon_power
from nova_drs.db import api
from nova_drs.db import hosts as db_hosts
from nova_drs.db import migration
from nova_drs.power import sealing
from tests import services
from tests.unit.cmd.test_manage_power import _conf

IPMI = {'address': '10.0.0.5', 'username': 'admin', 'password': 'Legacy-S3cret', 'kg': 'K3y'}
WOL = {'suspend_via': 'ipmi', 'suspend_options': dict(IPMI, password='Nested-S3cret')}
CUSTOM = {'endpoint': 'x', 'bmc_password': 'Custom-S3cret'}  # driver not installed
LEGACY = {'cmp1': ('ipmi', IPMI), 'cmp2': ('wol', WOL), 'cmp3': ('custom', CUSTOM),
          'cmp4': ('wol', {'broadcast': '192.0.2.255'})}
CLEAR = ('Legacy-S3cret', 'K3y', 'Nested-S3cret', 'Custom-S3cret')


@pytest.fixture
def cloud(tmp_path):
    """A MariaDB DRS database with rows written before sealing; key pairs ``a`` and ``b``."""
    scratch = services.ScratchDatabase('mariadb')
    database = api.Database(scratch.url)
    migration.sync(database)
    db_hosts.ensure_many(database, sorted(LEGACY))
    for host, (driver, options) in LEGACY.items():
        db_hosts.set_fields(database, host, power_driver=driver,
                            power_options=json.dumps(options))
    keys = {}
    for name in ('a', 'b'):
        private, public = str(tmp_path / ('%s.key' % name)), str(tmp_path / ('%s.pub' % name))
        keys[name] = (sealing.generate_key_pair(private, public), private, public)
    yield database, scratch.url, keys, tmp_path
    database.dispose()
    scratch.drop()


def _stored(database):
    return {host: (driver, text) for host, driver, text in
            db_hosts.stored_power_options(database)}


def _opened(database, privates):
    unsealer = sealing.Unsealer.from_files(privates)
    return {host: sealing.unseal_options(json.loads(text), host, unsealer)
            for host, (_, text) in _stored(database).items()}


def test_db_sync_seals_legacy_rows_and_power_seal_has_nothing_left(cloud, capsys):
    database, url, keys, tmp_path = cloud
    key_a, private_a, public_a = keys['a']
    conf = _conf(tmp_path, url, public=public_a)
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 0
    out = capsys.readouterr().out
    assert 'sealed the power secrets of 3 host(s) for key %s' % key_a in out
    stored = _stored(database)
    assert not [secret for _, text in stored.values() for secret in CLEAR if secret in text]
    assert json.loads(stored['cmp1'][1])['address'] == '10.0.0.5'
    assert stored['cmp4'][1] == json.dumps(LEGACY['cmp4'][1])  # nothing secret: untouched
    # The daemon's key opens exactly what was there.
    assert _opened(database, [private_a]) == {h: o for h, (_, o) in LEGACY.items()}
    assert manage.main(['--config-file', conf, 'power', 'seal']) == 0
    assert capsys.readouterr().out.strip() == 'sealed the power secrets of 0 host(s)'
    assert _stored(database) == stored


def test_db_sync_without_a_key_warns_and_leaves_rows(cloud, capsys):
    database, url, _, tmp_path = cloud
    before = _stored(database)
    assert manage.main(['--config-file', _conf(tmp_path, url), 'db', 'sync']) == 0
    assert ('WARNING: 3 host(s) hold power secrets in clear (first: cmp1); set [drs_power] '
            'seal_public_key_file and run "nova-drs-manage power seal"'
            in capsys.readouterr().out)
    assert _stored(database) == before
    assert manage.main(['--config-file', _conf(tmp_path, url), 'power', 'seal']) == 1
    assert capsys.readouterr().err.strip() == (
        'nova-drs-manage: [drs_power] seal_public_key_file is not set: nothing to seal '
        'with ("power keygen" makes a key pair)')


def test_rotation_reseals_for_the_new_key_and_the_old_key_can_go(cloud, capsys):
    database, url, keys, tmp_path = cloud
    key_a, private_a, public_a = keys['a']
    key_b, private_b, public_b = keys['b']
    assert manage.main(['--config-file', _conf(tmp_path, url, public=public_a),
                        'power', 'seal']) == 0
    # Rotation: the daemon gets the new private key next to the old one, API
    # nodes the new public key, then reseal on the daemon's host.
    conf = _conf(tmp_path, url, public=public_b, privates=(private_a, private_b))
    capsys.readouterr()
    assert manage.main(['--config-file', conf, 'power', 'reseal']) == 0
    assert capsys.readouterr().out.strip() == (
        'resealed for key %s the power secrets of 3 host(s)' % key_b)
    ids = set()
    for _, text in _stored(database).values():
        ids |= sealing.sealed_key_ids(json.loads(text))
    assert ids == {key_b}
    assert _opened(database, [private_b]) == {h: o for h, (_, o) in LEGACY.items()}


def test_reseal_without_the_old_key_names_each_host_left(cloud, capsys):
    database, url, keys, tmp_path = cloud
    _, _, public_a = keys['a']
    key_b, private_b, public_b = keys['b']
    manage.main(['--config-file', _conf(tmp_path, url, public=public_a), 'power', 'seal'])
    capsys.readouterr()
    conf = _conf(tmp_path, url, public=public_b, privates=(private_b,))
    assert manage.main(['--config-file', conf, 'power', 'reseal']) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == 'resealed for key %s the power secrets of 0 host(s)' % key_b
    assert lines[1].startswith("cmp1: not resealed for key %s: power option 'password' of "
                               "host cmp1 is sealed for key %s" % (key_b, keys['a'][0]))
    assert len(lines) == 4


def test_daemon_refuses_to_start_without_the_key_in_one_line(cloud):
    database, url, keys, tmp_path = cloud
    key_a, private_a, public_a = keys['a']
    manage.main(['--config-file', _conf(tmp_path, url, public=public_a), 'power', 'seal'])
    conf = drs_conf.CONF
    try:
        manage.startup.parse(conf, ['--config-file', _conf(tmp_path, url, public=public_a)],
                             'nova-loadbalancer')
        with pytest.raises(exception.ConfigError) as raised:
            daemon_power.check_keys(conf, database)
        assert str(raised.value) == (
            'power secrets of 3 host(s) (first: cmp1) are sealed for key(s) %s, not among '
            '[drs_power] unseal_private_key_files; give this daemon that private key' % key_a)
        conf.set_override('unseal_private_key_files', [private_a], group='drs_power')
        daemon_power.check_keys(conf, database)  # opens: no error
    finally:
        conf.reset()


def test_nova_loadbalancer_exits_1_in_one_line_without_the_key(cloud, capsys):
    """The daemon command itself, as an operator starts it, before any cycle
    (its own process: loading [drs_auth]'s password plugin registers
    options on the global configuration that other tests must not see)."""
    database, url, keys, tmp_path = cloud
    key_a, private_a, public_a = keys['a']
    manage.main(['--config-file', _conf(tmp_path, url, public=public_a), 'power', 'seal'])
    capsys.readouterr()
    conf = _conf(tmp_path, url, public=public_a)
    with open(conf, 'a') as extra:
        extra.write('[drs_auth]\nauth_type = password\nauth_url = http://127.0.0.1:9/identity\n'
                    'username = drs\npassword = secret\nproject_name = service\n')
    result = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'nova-loadbalancer'),
         '--config-file', conf, '--dry-run'],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    err = result.stderr
    assert 'Traceback' not in err
    assert err.splitlines() == [
        'nova-loadbalancer: power secrets of 3 host(s) (first: cmp1) are sealed for key(s) '
        '%s, not among [drs_power] unseal_private_key_files; give this daemon that private '
        'key' % key_a]
