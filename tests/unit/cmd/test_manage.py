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

from nova_drs.cmd import manage


def _conf_file(tmp_path, body):
    path = tmp_path / 'nova.conf'
    path.write_text(body)
    return str(path)


def test_db_sync_on_embedded_sqlite_twice(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[drs]\nstate_path = %s\n' % (tmp_path / 'state'))
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 0
    assert 'upgraded from empty' in capsys.readouterr().out
    assert (tmp_path / 'state' / 'nova_drs.sqlite').exists()
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 0
    assert 'is up to date' in capsys.readouterr().out


def test_bad_url_exits_nonzero_with_one_line(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[drs_database]\nconnection = bogus://nowhere\n')
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 1
    err = capsys.readouterr().err
    assert err.startswith('nova-drs-manage: invalid database URL bogus://nowhere')
    assert 'Traceback' not in err


def test_bad_option_value_exits_1_naming_option(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[drs_database]\nmax_pool_size = lots\n')
    assert manage.main(['--config-file', conf, 'db', 'version']) == 1
    assert '[drs_database] max_pool_size' in capsys.readouterr().err
