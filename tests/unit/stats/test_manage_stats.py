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

"""``nova-drs-manage stats purge``."""

import datetime

from oslo_utils import timeutils

from nova_drs.cmd import manage
from nova_drs.db import api
from nova_drs.db import statistics as db_statistics
from nova_drs.stats import ingest


def _conf_file(tmp_path, body=''):
    path = tmp_path / 'nova.conf'
    path.write_text('[drs]\nstate_path = %s\n%s' % (tmp_path / 'state', body))
    return str(path)


def _samples(ages_seconds):
    now = timeutils.utcnow()
    return [{'host': 'h1', 'host_stats': {},
             'sampled_at': (now - datetime.timedelta(seconds=age)).isoformat()}
            for age in ages_seconds]


def test_purge_uses_retention_then_older_than(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[drs_stats]\nretention = 600\n')
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 0
    database = api.Database('sqlite:///%s' % (tmp_path / 'state' / 'nova_drs.sqlite'))
    ingest.insert_samples(database, _samples([30, 300, 900, 1200]))
    capsys.readouterr()
    assert manage.main(['--config-file', conf, 'stats', 'purge']) == 0
    assert 'purged 2 host and 0 instance samples' in capsys.readouterr().out
    assert manage.main(['--config-file', conf, 'stats', 'purge', '--older-than', '60']) == 0
    assert 'purged 1 host' in capsys.readouterr().out
    assert len(db_statistics.latest(database, 'h1', 10)) == 1


def test_negative_age_is_one_clear_line(tmp_path, capsys):
    conf = _conf_file(tmp_path)
    assert manage.main(['--config-file', conf, 'stats', 'purge', '--older-than', '-5']) == 1
    err = capsys.readouterr().err
    assert err.startswith('nova-drs-manage: --older-than must be 0 or more')


def test_retention_below_minimum_names_option(tmp_path, capsys):
    conf = _conf_file(tmp_path, '[drs_stats]\nretention = 5\n')
    assert manage.main(['--config-file', conf, 'stats', 'purge']) == 1
    assert '[drs_stats] retention' in capsys.readouterr().err
