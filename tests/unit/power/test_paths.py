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

"""Files named by power options stay inside [drs_power] files_dir.

The daemon-side tests drive the real ssh and redfish drivers at a closed
loopback port: the path check comes before any connection, so a refused
path never reaches the network, and a file outside is never read,
created or truncated.
"""

import os

import pytest

from nova_drs import exception
from nova_drs.power import base
from nova_drs.power import loader
from nova_drs.power import paths
from nova_drs.power import ssh
from tests import peers


@pytest.fixture
def files(conf, tmp_path):
    """(files_dir, a directory outside it) with conf pointing at the first."""
    inside, outside = tmp_path / 'files', tmp_path / 'outside'
    inside.mkdir()
    outside.mkdir()
    conf.set_override('files_dir', str(inside), group='drs_power')
    return inside, outside


def test_names_inside_resolve_there(conf, files):
    inside, _outside = files
    (inside / 'keys').mkdir()
    assert paths.confine(conf, 'keys/id_ed25519', 'k') == str(inside / 'keys' / 'id_ed25519')
    assert paths.confine(conf, str(inside / 'known_hosts'), 'k') == str(inside / 'known_hosts')


@pytest.mark.parametrize('name, reason', [
    ('../outside/secret', '".." is not allowed'),
    ('keys/../../outside/secret', '".." is not allowed'),
    ('/etc/shadow', 'resolves to /etc/shadow, outside [drs_power] files_dir'),
    ('.', 'outside [drs_power] files_dir'),
    (' ', 'must name a file'),
])
def test_dot_dot_absolute_outside_and_the_dir_itself_are_refused(conf, files, name, reason):
    with pytest.raises(exception.PathError, match='power option private_key_file') as raised:
        paths.confine(conf, name, 'private_key_file')
    assert reason in str(raised.value)


def test_symlink_out_is_refused_even_when_its_target_does_not_exist(conf, files):
    inside, outside = files
    (outside / 'secret').write_text('x')
    os.symlink(outside / 'secret', inside / 'link')
    os.symlink(outside / 'not-yet', inside / 'dangling')
    os.symlink(outside, inside / 'subdir')
    for name in ('link', 'dangling', 'subdir/secret', str(inside / 'link')):
        with pytest.raises(exception.PathError, match='outside'):
            paths.confine(conf, name, 'known_hosts_file')


def test_every_file_option_is_found_nested_ones_too(conf, files):
    wol = loader.driver_class('wol')
    options = {'suspend_via': 'ssh', 'suspend_options': {
        'username': 'root', 'private_key_file': 'id', 'known_hosts_file': '/etc/passwd',
        'suspend_command': '/etc/shadow'}}
    assert paths.named_files(wol.schema_for(options), options) == [
        ('suspend_options.private_key_file', 'id'),
        ('suspend_options.known_hosts_file', '/etc/passwd')]
    with pytest.raises(exception.PathError, match='suspend_options.known_hosts_file=/etc/passwd'):
        paths.check_options(wol, options, conf)


def test_redfish_verify_switch_words_are_not_paths(conf, files):
    redfish = loader.driver_class('redfish')
    for verify in (True, False, 'true', 'False', 'no', '1'):
        paths.check_options(redfish, {'url': 'https://bmc', 'verify': verify}, conf)
    paths.check_options(redfish, {'url': 'https://bmc', 'verify': 'ca.pem'}, conf)
    with pytest.raises(exception.PathError, match='verify=/etc/ssl/certs/ca.pem'):
        paths.check_options(redfish, {'url': 'https://bmc', 'verify': '/etc/ssl/certs/ca.pem'},
                            conf)


def _ssh_target(**options):
    return base.PowerTarget('host1', mode=base.MODE_S3, options=dict(
        {'address': '127.0.0.1', 'port': peers.free_port(), 'username': 'root'}, **options))


def test_ssh_never_reads_a_key_outside(conf, files, caplog):
    inside, outside = files
    key = outside / 'id_ed25519'
    peers._keygen(str(key))
    driver = loader.get_driver('ssh', conf)
    for name in (str(key), '../outside/id_ed25519'):
        with pytest.raises(exception.PowerError, match='private_key_file') as raised:
            driver.suspend(_ssh_target(private_key_file=name,
                                       known_hosts_file='known_hosts'))
        assert 'cannot load' not in str(raised.value)
        assert 'suspend of host host1 via ssh failed: power option' in str(raised.value)
    assert not (inside / 'known_hosts').exists()
    assert caplog.text.count('Refusing a power option of host host1: power option '
                             'private_key_file=') == 2


def test_auto_add_never_creates_or_truncates_a_file_outside(conf, files, monkeypatch):
    inside, outside = files
    peers._keygen(str(inside / 'id_ed25519'))
    victim = outside / 'authorized_keys'
    victim.write_text('precious\n')
    before = victim.stat()
    os.symlink(victim, inside / 'known_hosts')
    opened = []
    monkeypatch.setattr(ssh.paramiko.SSHClient, 'load_host_keys',
                        lambda client, name: opened.append(name))
    driver = loader.get_driver('ssh', conf)
    for name in (str(outside / 'new_file'), 'known_hosts', str(victim)):
        with pytest.raises(exception.PowerError, match='outside'):
            driver.status(_ssh_target(private_key_file='id_ed25519', known_hosts_file=name,
                                      host_key_policy='auto_add'))
    assert not (outside / 'new_file').exists()
    assert victim.read_text() == 'precious\n'
    assert victim.stat().st_mtime_ns == before.st_mtime_ns
    assert opened == []


def test_ssh_inside_goes_on_to_connect(conf, files):
    inside, _outside = files
    peers._keygen(str(inside / 'id_ed25519'))
    driver = loader.get_driver('ssh', conf)
    # Past the path checks: auto_add creates known_hosts inside, then the
    # closed port answers.
    assert driver.status(_ssh_target(private_key_file='id_ed25519',
                                     known_hosts_file='known_hosts',
                                     host_key_policy='auto_add')) == base.UNKNOWN
    assert (inside / 'known_hosts').exists()


def test_redfish_refuses_a_ca_bundle_outside_before_connecting(conf, files):
    driver = loader.get_driver('redfish', conf)
    target = base.PowerTarget('host1', options={
        'url': 'https://127.0.0.1:%d' % peers.free_port(), 'verify': '/etc/ssl/certs'})
    with pytest.raises(exception.PowerError, match='verify=/etc/ssl/certs resolves to'):
        driver.status(target)
