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

"""``nova-drs-manage power keygen``; sealing the rows of a real MariaDB is in
tests/component/cmd/test_manage_power.py, which uses ``_conf``."""

import os

from nova_drs.cmd import manage
from nova_drs.power import sealing


def _conf(tmp_path, url, public=None, privates=()):
    path = tmp_path / 'nova.conf'
    body = '[drs]\nstate_path = %s\n[drs_database]\nconnection = %s\n[drs_power]\n' % (
        tmp_path, url)
    if public:
        body += 'seal_public_key_file = %s\n' % public
    if privates:
        body += 'unseal_private_key_files = %s\n' % ','.join(privates)
    path.write_text(body)
    return str(path)


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path, capsys):
    conf = _conf(tmp_path, 'sqlite:///%s' % (tmp_path / 'drs.sqlite'))
    private, public = str(tmp_path / 'new.key'), str(tmp_path / 'new.pub')
    argv = ['--config-file', conf, 'power', 'keygen', '--private-key', private,
            '--public-key', public]
    assert manage.main(argv) == 0
    assert capsys.readouterr().out.startswith('key pair %s: private key %s (mode 0600'
                                              % (sealing.Sealer.from_file(public).key_id,
                                                 private))
    assert os.stat(private).st_mode & 0o777 == 0o600
    assert manage.main(argv) == 1
    assert capsys.readouterr().err.strip() == (
        'nova-drs-manage: %s already exists; not overwriting a key' % private)


