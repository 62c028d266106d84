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

"""Every bad configuration is one line on stderr and exit 1, never a traceback.

``CASES`` is also the table of doc/source/bad-config.md (checked below), so
the documented messages are the ones the commands print. ``TMP`` in a case
stands for a scratch directory holding a regular file ``file``, a directory
``dir``, a file ``binary`` that is not UTF-8 and a symlink loop ``loop``.
"""

import logging
import pathlib
import subprocess
import sys

from keystoneauth1 import loading as ks_loading
import pytest

from nova_drs import conf as drs_conf
from nova_drs.cmd import collector
from nova_drs.cmd import loadbalancer
from nova_drs.cmd import manage

DOC = pathlib.Path(__file__).parents[3] / 'doc' / 'source' / 'bad-config.md'
BIN = pathlib.Path(sys.executable).parent
AUTH = ('[drs_auth]\nauth_type = password\nauth_url = http://127.0.0.1:9/identity\n'
        'username = drs\npassword = secret\nproject_name = service\n')
UNREACHABLE_MYSQL = 'mysql+pymysql://root@127.0.0.1:9/nova_drs'

# (command, nova.conf body, extra arguments, the one line on stderr)
CASES = [
    ('nova-loadbalancer', '[loadbalancer]\nhistory_quantile = nan\n', [],
     'nova-loadbalancer: invalid value for option [loadbalancer] history_quantile: '
     'nan is not a finite number'),
    ('nova-loadbalancer', '[loadbalancer]\nplace_cpu = nan\n', [],
     'nova-loadbalancer: invalid value for option [loadbalancer] place_cpu: '
     'nan is not a finite number'),
    ('nova-drs-manage', '[drs_scheduler]\npower_saving_weight_multiplier = inf\n',
     ['db', 'version'],
     'nova-drs-manage: invalid value for option [drs_scheduler] '
     'power_saving_weight_multiplier: inf is not a finite number'),
    ('nova-drs-collector', '[drs_coordination]\nheartbeat_interval = -inf\n', [],
     'nova-drs-collector: invalid value for option [drs_coordination] heartbeat_interval: '
     'Should be greater than or equal to 0.1'),
    ('nova-loadbalancer', '[loadbalancer]\nperiod = $nosuchvar\n', [],
     'nova-loadbalancer: invalid value for option [loadbalancer] period: it refers to '
     '$nosuchvar, which is not an option'),
    ('nova-drs-manage', '[drs_stats]\nretention = 5\n', ['db', 'version'],
     'nova-drs-manage: invalid value for option [drs_stats] retention: '
     'Should be greater than or equal to 60'),
    ('nova-loadbalancer', '[drs_retention]\nmigrations = 12\n', [],
     'nova-loadbalancer: [drs_retention] migrations (12 h) must exceed [drs_oscillation] '
     'oscillation_window (43200 s): the purge would delete history it reads'),
    ('nova-loadbalancer', '[drs_auth]\nretriable_status_codes = 503,gateway\n', [],
     'nova-loadbalancer: invalid value for option [drs_auth] retriable_status_codes: '
     "invalid literal for int() with base 10: 'gateway'"),
    ('nova-drs-collector', '[DEFAULT]\nrate_limit_burst = many\n', [],
     'nova-drs-collector: invalid value for option [DEFAULT] rate_limit_burst: '
     "invalid literal for int() with base 10: 'many'"),
    ('nova-loadbalancer', '[loadbalancer]\npolicy = nosuch\n', [],
     'nova-loadbalancer: [loadbalancer] policy = nosuch: unknown name; available: '
     'consolidation, drs, even_distribution'),
    ('nova-loadbalancer', '[loadbalancer]\noverload_detector = nosuch\n', [],
     'nova-loadbalancer: [loadbalancer] overload_detector = nosuch: unknown name; '
     'available: iqr, lr, lrr, mad, thr'),
    ('nova-loadbalancer', '[loadbalancer]\nvm_selection = nosuch\n', [],
     'nova-loadbalancer: [loadbalancer] vm_selection = nosuch: unknown name; '
     'available: mc, mmt, mu, rs'),
    ('nova-loadbalancer', '[loadbalancer]\nplacement = nosuch\n', [],
     'nova-loadbalancer: [loadbalancer] placement = nosuch: unknown name; '
     'available: pabfd'),
    ('nova-drs-collector', '[loadbalancer]\nunderload_detector = nosuch\n', [],
     'nova-drs-collector: [loadbalancer] underload_detector = nosuch: unknown name; '
     'available: least_utilised, mean_threshold'),
    ('nova-drs-manage', '[drs_scale]\nscaler = nosuch\n', ['db', 'version'],
     "nova-drs-manage: unknown scaler 'nosuch' in [drs_scale] scaler"),
    ('nova-loadbalancer', '', [],
     'nova-loadbalancer: [drs_auth] auth_type is not set: nova-loadbalancer needs '
     'keystone credentials for the compute and placement APIs'),
    ('nova-loadbalancer', '[drs_auth]\nauth_type = nosuch\n', [],
     'nova-loadbalancer: [drs_auth] is not usable: The plugin nosuch could not be found'),
    ('nova-loadbalancer', '[drs_auth]\nauth_type = password\n', [],
     'nova-loadbalancer: [drs_auth] is not usable: Auth plugin requires parameters '
     'which were not given: auth_url'),
    ('nova-loadbalancer', AUTH + '[drs]\nstate_path = TMP/file/state\n', [],
     'nova-loadbalancer: [drs] state_path = TMP/file/state: TMP/file is a file, '
     'not a directory'),
    ('nova-drs-collector', '[drs]\nstate_path = TMP/file\n', [],
     'nova-drs-collector: [drs] state_path = TMP/file: TMP/file is a file, '
     'not a directory'),
    ('nova-drs-manage', '[drs_database]\nconnection = sqlite:///TMP/file/drs.sqlite\n',
     ['db', 'sync'],
     'nova-drs-manage: [drs_database] connection = sqlite:///TMP/file/drs.sqlite: '
     'TMP/file is a file, not a directory'),
    ('nova-drs-manage', '[drs_database]\nconnection = sqlite:///TMP/dir\n', ['db', 'sync'],
     'nova-drs-manage: [drs_database] connection = sqlite:///TMP/dir: SQLite database '
     'TMP/dir is not a writable file'),
    ('nova-drs-manage', '[drs_power]\nseal_public_key_file = TMP/missing.pub\n', ['db', 'sync'],
     'nova-drs-manage: [drs_power] seal_public_key_file: cannot read public key '
     'TMP/missing.pub: No such file or directory'),
    ('nova-drs-manage', '[drs_power]\nseal_public_key_file = TMP/file\n', ['power', 'seal'],
     'nova-drs-manage: [drs_power] seal_public_key_file: TMP/file is not an X25519 public '
     'key in PEM (make one with "nova-drs-manage power keygen")'),
    ('nova-drs-manage', '[drs_database]\nconnection = bogus://nowhere\n', ['db', 'sync'],
     "nova-drs-manage: invalid database URL bogus://nowhere: Can't load plugin: "
     'sqlalchemy.dialects:bogus'),
    ('nova-drs-manage', '[loadbalancer]\nperiod = $period\n', ['db', 'version'],
     'nova-drs-manage: invalid value for option [loadbalancer] period: its $references '
     'form a loop'),
    ('nova-drs-manage', 'no section header\n', ['db', 'version'],
     'nova-drs-manage: cannot parse config file TMP/nova.conf: line 1: '
     "No ':' or '=' found in assignment: 'no section header'"),
]

# (command, config path arguments) for config paths that are not readable text
CONFIG_FILE_CASES = [
    ('nova-drs-manage', ['--config-file', 'TMP/dir'],
     'nova-drs-manage: cannot read config file TMP/dir: Is a directory'),
    ('nova-loadbalancer', ['--config-file', 'TMP/loop'],
     'nova-loadbalancer: cannot read config file TMP/loop: Too many levels of symbolic links'),
    ('nova-drs-collector', ['--config-file', 'TMP/missing.conf'],
     'nova-drs-collector: cannot read config file TMP/missing.conf: not found or not readable'),
    ('nova-drs-manage', ['--config-file', 'TMP/binary'],
     'nova-drs-manage: cannot read config file TMP/binary: not UTF-8 text '
     '(invalid start byte)'),
    ('nova-drs-manage', ['--config-dir', 'TMP/file'],
     'nova-drs-manage: config directory TMP/file is not a directory'),
    ('nova-drs-collector', ['--config-dir', 'TMP/missing'],
     'nova-drs-collector: config directory TMP/missing not found'),
]

MAINS = {'nova-loadbalancer': loadbalancer.main, 'nova-drs-collector': collector.main,
         'nova-drs-manage': manage.main}


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    def started(*_args, **_kwargs):
        raise AssertionError('nova-drs-collector started despite the bad configuration')
    monkeypatch.setattr(collector.service, 'launch', started)
    (tmp_path / 'file').write_text('a regular file\n')
    (tmp_path / 'dir').mkdir()
    (tmp_path / 'binary').write_bytes(b'[DEFAULT]\n\xff\xfe\x00 not text\n')
    (tmp_path / 'loop').symlink_to(tmp_path / 'loop2')
    (tmp_path / 'loop2').symlink_to(tmp_path / 'loop')
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield tmp_path
    root.handlers[:], root.level = handlers, level  # a command may set logging up
    drs_conf.CONF.reset()
    # Loading [drs_auth] registers the plugin's options (auth_url required).
    for opt in ks_loading.get_auth_plugin_conf_options('password'):
        drs_conf.CONF.unregister_opt(opt, group='drs_auth')


def _conf(scratch, body):
    path = scratch / 'nova.conf'
    if '[drs]' not in body and '[drs_database]' not in body:
        body += '[drs]\nstate_path = TMP/state\n'
    path.write_text(body.replace('TMP', str(scratch)))
    return str(path)


def _one_line(err, expected):
    assert 'Traceback' not in err
    assert err.splitlines() == [expected], err


@pytest.mark.parametrize('command, body, args, expected', CASES,
                         ids=['%d-%s' % (i, c[0]) for i, c in enumerate(CASES)])
def test_bad_config_is_one_line_and_exit_1(scratch, capsys, command, body, args, expected):
    code = MAINS[command](['--config-file', _conf(scratch, body)] + args)

    assert code == 1
    _one_line(capsys.readouterr().err, expected.replace('TMP', str(scratch)))


@pytest.mark.parametrize('command, paths, expected', CONFIG_FILE_CASES,
                         ids=[' '.join(c[1]) for c in CONFIG_FILE_CASES])
def test_unreadable_config_file_is_one_line(scratch, capsys, command, paths, expected):
    argv = [path.replace('TMP', str(scratch)) for path in paths]
    code = MAINS[command](argv + (['db', 'version'] if command == 'nova-drs-manage' else []))

    assert code == 1
    _one_line(capsys.readouterr().err, expected.replace('TMP', str(scratch)))


def test_usage_error_exits_2(scratch):
    with pytest.raises(SystemExit) as exit_:
        loadbalancer.main(['--no-such-flag'])

    assert exit_.value.code == 2


def _run(command, *args, timeout=120):
    return subprocess.run([str(BIN / command), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


# Cases that get past logging setup run the real console scripts, so the
# logging they configure stays out of the test process.
LOGGING_CASES = [
    ('[DEFAULT]\nlog_file = TMP/dir\n',
     'nova-drs-collector: cannot open log file TMP/dir: Is a directory'),
    ('[DEFAULT]\nlog_file = TMP/file/collector.log\n',
     'nova-drs-collector: cannot open log file TMP/file/collector.log: Not a directory'),
    ('[DEFAULT]\nlog_config_append = TMP/missing-logging.conf\n',
     "nova-drs-collector: [DEFAULT] log_config_append TMP/missing-logging.conf: [Errno 2] "
     "No such file or directory: 'TMP/missing-logging.conf'"),
    ('[drs_database]\nconnection = %s\n' % UNREACHABLE_MYSQL,
     'nova-drs-collector: cannot connect to %s: (pymysql.err.OperationalError) (2003, '
     '"Can\'t connect to MySQL server on \'127.0.0.1\' ([Errno 111] Connection refused)")'
     % UNREACHABLE_MYSQL),
]


@pytest.mark.parametrize('body, expected', LOGGING_CASES,
                         ids=['log_file-dir', 'log_file-under-file', 'log_config_append',
                              'mysql-unreachable'])
def test_collector_startup_failures_are_one_line(scratch, body, expected):
    result = _run('nova-drs-collector', '--config-file', _conf(scratch, body))

    assert result.returncode == 1
    # Also no eventlet banner and no "SQL connection failed" per retry.
    _one_line(result.stderr, expected.replace('TMP', str(scratch)))


def test_unreachable_mysql_is_one_line_without_retries_for_manage(scratch):
    conf = _conf(scratch, '[drs_database]\nconnection = %s\n' % UNREACHABLE_MYSQL)

    result = _run('nova-drs-manage', '--config-file', conf, 'db', 'version')

    assert result.returncode == 1
    assert result.stderr.startswith('nova-drs-manage: cannot connect to %s'
                                    % UNREACHABLE_MYSQL)
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_dry_run_that_cannot_observe_exits_1(scratch, capsys):
    conf = _conf(scratch, AUTH)
    assert manage.main(['--config-file', conf, 'db', 'sync']) == 0

    result = _run('nova-loadbalancer', '--config-file', conf, '--dry-run')

    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert last.startswith('nova-loadbalancer: could not observe the cloud, no plan: '), last
    assert 'Traceback' not in result.stderr
    assert '"skipped"' not in result.stdout  # no plan printed as if all went well
    assert 'alembic' not in result.stdout  # third-party INFO chatter is off


def test_documented_table_lists_every_case():
    doc = DOC.read_text()
    for case in CASES + CONFIG_FILE_CASES + LOGGING_CASES:
        assert case[-1].replace('|', '\\|') in doc, case[-1]


@pytest.mark.parametrize('module', ['nova_drs.cmd.manage', 'nova_drs.cmd.sim'])
def test_commands_that_do_not_need_eventlet_do_not_import_it(module):
    # The oslo.log of 2025.2 (7.2.1) and 2026.1 (8.1.0) imports
    # oslo_utils.eventletutils, hence eventlet, itself: there nova-drs can
    # only add no import of its own and no banner.
    probe = ('import sys, oslo_log.log; print("eventlet" in sys.modules); '
             'import %s; print("eventlet" in sys.modules)' % module)
    result = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,
                            timeout=120, check=True)

    by_oslo_log, after_command = result.stdout.split()
    assert after_command == by_oslo_log
    assert 'Eventlet is deprecated' not in result.stderr


@pytest.mark.parametrize('module', ['nova_drs.cmd.collector', 'nova_drs.cmd.loadbalancer'])
def test_services_whose_libraries_import_eventlet_show_no_banner(module):
    probe = 'import sys, %s; print("eventlet" in sys.modules)' % module
    result = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,
                            timeout=120, check=True)

    assert result.stdout.strip() == 'True'  # oslo.service's default backend
    assert 'Eventlet is deprecated' not in result.stderr


def test_good_config_reaches_the_collector_service(scratch, monkeypatch, capsys):
    started = []

    class Launcher:
        def wait(self):
            started.append(True)
    monkeypatch.setattr(collector.service, 'launch', lambda *args, **kwargs: Launcher())

    assert collector.main(['--config-file', _conf(scratch, '')]) == 0

    assert started == [True]
    assert capsys.readouterr().err == ''
