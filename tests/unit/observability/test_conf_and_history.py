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

"""[drs_metrics]/[drs_energy] options and the host state history on SQLite."""

import datetime
import os
import subprocess
import sys
import urllib.request

from oslo_utils import timeutils
import pytest
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.db import hosts
from nova_drs.db import models
from nova_drs.db import state_history
from nova_drs.observability import energy
from nova_drs.observability import metrics
from tests import config_files


def test_metrics_are_off_by_default(tmp_path, database):
    conf = config_files.load(tmp_path)
    assert conf.drs_metrics.port == 0
    assert metrics.start_exporter(conf, database) is None


def test_bad_power_curve_fails_validation_naming_the_option(tmp_path):
    conf = config_files.load(tmp_path, '[drs_energy]\npower_curve = 1,2,3\n')
    with pytest.raises(exception.ConfigError, match=r'\[drs_energy\] power_curve'):
        drs_conf.validate(conf)


def test_collector_with_bad_metrics_port_is_one_line_and_exit_1(tmp_path):
    (tmp_path / 'nova.conf').write_text('[drs_metrics]\nport = 99999\n')
    result = subprocess.run(
        [sys.executable, '-m', 'nova_drs.cmd.collector', '--config-file',
         str(tmp_path / 'nova.conf')], capture_output=True, text=True, timeout=60,
        env={**os.environ, 'PYTHONWARNINGS': 'ignore'})  # oslo.service's eventlet notice
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert '[drs_metrics] port' in result.stderr


def test_exporter_serves_on_the_configured_port(tmp_path, database):
    import socket
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    conf = config_files.load(tmp_path, '[drs_metrics]\nport = %d\n' % port)
    server = metrics.start_exporter(conf, database)
    try:
        with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=5) as r:
            text = r.read().decode()
    finally:
        server.shutdown()
    assert 'nova_drs_database_up 1.0' in text


def test_every_transition_is_recorded_in_the_same_transaction(database):
    hosts.ensure(database, 'h1')
    hosts.transition(database, 'h1', 'active', 'suspending', 'underload')
    assert hosts.transition(database, 'h1', 'active', 'suspending', 'lost race') is None
    hosts.transition(database, 'h1', 'suspending', 'suspended', 'down')
    assert [(c['host'], c['state'], c['reason'])
            for c in state_history.changes(database)] == [
        ('h1', 'suspending', 'underload'), ('h1', 'suspended', 'down')]
    since = datetime.datetime(2000, 1, 1)
    assert state_history.counts_by_state(database, since) == {'suspending': 1, 'suspended': 1}
    assert state_history.counts_by_state(database, timeutils.utcnow() + datetime.timedelta(
        seconds=1)) == {}


def test_energy_report_integrates_history(tmp_path, database):
    conf = config_files.load(tmp_path)
    for host in ('h1', 'h2'):
        hosts.ensure(database, host)
    hosts.transition(database, 'h1', 'active', 'suspending', 'underload')
    hosts.transition(database, 'h1', 'suspending', 'suspended', 'down')
    changes = state_history.changes(database)
    start = changes[0]['changed_at'] - datetime.timedelta(hours=1)
    until = changes[-1]['changed_at'] + datetime.timedelta(hours=2)
    with database.writer() as session:  # both hosts known before the window
        session.execute(sa.update(models.DrsHost).values(
            created_at=start - datetime.timedelta(days=1)))
    report = energy.report(database, conf, start, until)
    # h1: ~1 h idle (100 W) then 2 h suspended (5 W); h2: 3 h idle. No samples: idle.
    assert report['kwh_drawn'] == pytest.approx((100 + 2 * 5 + 3 * 100) / 1000, abs=1e-3)
    assert report['kwh_saved'] == pytest.approx(2 * 95 / 1000, abs=1e-3)
    assert report['suspended_host_hours'] == pytest.approx(2, abs=1e-3)
    assert report['measured_share'] == 0.0
    only_h2 = energy.report(database, conf, start, until, hosts=['h2'])
    assert only_h2['kwh_saved'] == 0 and only_h2['hosts'] == 1


def test_grafana_dashboard_uses_only_exposed_metrics(tmp_path, database):
    import json
    import re

    from nova_drs.db import lb_migrations
    hosts.ensure(database, 'h1')
    hosts.transition(database, 'h1', 'active', 'suspending', 'underload')
    lb_migrations.finish(database, lb_migrations.request(database, 'uuid', 'h1', 'h2', 'live',
                                                         'underload'), 'done')
    server = metrics.serve('127.0.0.1', 0, database, config_files.load(tmp_path))
    server.shutdown()
    metrics.count_request('compute', 'GET')
    with metrics.observe_phase('plan'):
        pass
    exposed = {sample.name for family in metrics.REGISTRY.collect()
               for sample in family.samples}
    path = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'etc', 'nova-drs',
                        'grafana-dashboard.json')
    with open(path) as handle:
        dashboard = json.load(handle)
    used = {name for panel in dashboard['panels'] for target in panel['targets']
            for name in re.findall(r'nova_drs_\w+', target['expr'])}
    assert used and used <= exposed, used - exposed


def test_collector_with_metrics_port_in_use_is_one_line_and_exit_1(tmp_path):
    import socket
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        (tmp_path / 'nova.conf').write_text(
            '[drs]\nstate_path = %s\n[drs_metrics]\nport = %d\n'
            % (tmp_path / 'state', taken.getsockname()[1]))
        result = subprocess.run(
            [sys.executable, '-m', 'nova_drs.cmd.collector', '--config-file',
             str(tmp_path / 'nova.conf')], capture_output=True, text=True, timeout=60,
            env={**os.environ, 'PYTHONWARNINGS': 'ignore'})
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        'nova-drs-collector: [drs_metrics] cannot serve metrics: [Errno 98] Address already '
        'in use']
