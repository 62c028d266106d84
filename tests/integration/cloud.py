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

"""A real multi-process OpenStack cloud on loopback, for the integration tier.

keystone (fernet, uwsgi), placement (uwsgi), glance (file store, uwsgi), a
``network`` stand-in (uwsgi), nova-api (uwsgi), nova-conductor,
nova-scheduler and three nova-compute processes, on the MariaDB and RabbitMQ
already running on 127.0.0.1 (own databases ``nova_drs_ci_*`` and own vhost).
nova-drs is installed and configured by the devstack plugin's own functions
(``devstack/lib/nova-drs.sh`` through ``devstack/lib/shim.sh``), then
``nova-loadbalancer`` is started the way devstack starts it (``run_process``).

All services run from ``.venv-cloud`` (built from
``tests/integration/cloud-constraints.txt``) so their dependencies never touch
the main venv. Each service has its own config directory; logs go to
``<workdir>/logs``; PIDs to ``<workdir>/pids`` and every process started is
stopped by its PID (its own session: uwsgi's workers go with their master).

Compute driver: ``trace_driver.TraceLoadDriver`` (test-only, see
trace_driver.py): nova's ``FakeDriverWithoutFakeNodes`` with 4 vCPUs whose
servers burn CPU as the PlanetLab trace named in their metadata says
(one 5-minute sample per ``SECONDS_PER_SAMPLE`` s). Its
live migrations finish at once, and its node UUID is the persistent local
node identity (``<state_path>/compute_id``): a stopped nova-compute can be
started again as the same resource provider, exactly what a power cycle
looks like.

Power: every host has a virtual IPMI BMC (pyghmi) and a Redfish system (one
sushy-tools emulator for all hosts) whose chassis is its nova-compute process
(bmc.py); ``bmc_options(host, kind)`` gives the shipped ``ipmi``/``redfish``
power drivers' options for it.

Usage: ``tools/minicloud up|down|status`` or the ``Cloud`` class.
"""

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import pymysql
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, 'tests', 'integration')
VENV = os.environ.get('NOVA_DRS_CLOUD_VENV', os.path.join(ROOT, '.venv-cloud'))
BIN = os.path.join(VENV, 'bin')
CONSTRAINTS = os.path.join(HERE, 'cloud-constraints.txt')
WORKDIR = os.environ.get('NOVA_DRS_CLOUD_DIR', os.path.join(ROOT, 'state', 'minicloud'))
#: pyuwsgi: uWSGI as a wheel (its ``uwsgi`` command, the same server), where
#: the ``uwsgi`` sdist compiles its C core on every clean machine (~60 s of
#: CPU in a clean-clone `make test`).
CLOUD_PACKAGES = ['keystone', 'glance', 'openstack-placement', 'nova', 'pyuwsgi', 'PyMySQL',
                  'python-openstackclient', 'tempest']

DB = {'host': '127.0.0.1', 'port': 3306, 'user': 'root', 'password': ''}
# One name for this cloud's databases (NAME_*) and RabbitMQ vhost, so that a
# second clone can run its own cloud beside the first (NOVA_DRS_CLOUD_NAME).
NAME = os.environ.get('NOVA_DRS_CLOUD_NAME', 'nova_drs_ci')
RABBIT = {'host': '127.0.0.1', 'port': 5672, 'user': 'guest', 'password': 'guest',
          'vhost': NAME}
DB_PREFIX = NAME + '_'
PASSWORD = 'secret'
REGION = 'RegionOne'
COMPUTES = ('compute1', 'compute2', 'compute3')
BMC_USER = 'admin'
BMC_PASSWORD = 'bmc-secret'
TRACE_DIR = os.path.join(ROOT, 'data', 'planetlab-sample', '20110303')
VENV_LOCK = os.path.join(ROOT, 'state', 'venv-cloud.lock')
SECONDS_PER_SAMPLE = 5
WAKE_TIMEOUT = 90
SUSPEND_TIMEOUT = 30
HOST_COOLDOWN = 30
SERVICE_USERS = ('nova', 'placement', 'glance', 'neutron')


class CloudError(Exception):
    """The cloud could not be built or started; the message says what and where."""


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _listening(host, port):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _write_ini(path, sections):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        for section, options in sections.items():
            handle.write('[%s]\n' % section)
            for key, value in options.items():
                handle.write('%s = %s\n' % (key, value))
            handle.write('\n')


def _db_url(name, prefix=DB_PREFIX):
    return 'mysql+pymysql://%(user)s:%(password)s@%(host)s:%(port)s/' % DB + \
        prefix + name + '?charset=utf8'


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours is not alive.
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().split(')')[-1].split()[0] != 'Z'
    except OSError:
        return False


def ensure_venv(log=print):
    """Build .venv-cloud from the cloud constraints (once; rebuilt when they change).

    Clouds started at once (make integration: two pytest sessions) build it
    once: the first holds the lock, the others find its stamp.
    """
    os.makedirs(os.path.dirname(VENV_LOCK), exist_ok=True)
    with open(VENV_LOCK, 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _ensure_venv_locked(log)


def _ensure_venv_locked(log):
    stamp = os.path.join(VENV, '.cloud-stamp')
    inputs = [CONSTRAINTS, os.path.join(ROOT, 'setup.cfg')]
    if os.path.exists(stamp) and all(os.path.getmtime(path) <= os.path.getmtime(stamp)
                                     for path in inputs if os.path.exists(path)):
        return
    python = os.path.join(BIN, 'python')
    # uv, as for every venv (the Makefile puts it beside this python), with
    # no byte-code: the services write that of the modules they import, once
    # (Cloud._spawn): 6,263 .pyc for its 13,659 .py files after a CI run.
    uv_install = [os.path.join(os.path.dirname(sys.executable), 'uv'), 'pip', 'install', '-q',
                  '--python', python]
    uv_env = dict(os.environ, UV_LINK_MODE='copy')
    if not os.path.exists(python):
        _run([sys.executable, '-m', 'venv', VENV], 'create .venv-cloud')
        _run(uv_install + ['--upgrade', 'pip'], 'upgrade pip', env=uv_env)
    log('minicloud: installing the services into %s' % VENV)
    _run(uv_install + ['-c', CONSTRAINTS] + CLOUD_PACKAGES, 'install of the cloud services',
         env=uv_env)
    plugin_functions(['install_nova_drs'], _plugin_env(WORKDIR, {}))
    with open(stamp, 'w'):
        pass


def freeze_constraints():
    """Write cloud-constraints.txt from what .venv-cloud holds (after a working build)."""
    frozen = _run([os.path.join(BIN, 'python'), '-m', 'pip', 'freeze', '--exclude-editable'],
                  'pip freeze')
    lines = [line for line in frozen.splitlines()
             if line and not line.startswith(('-e', '#', 'nova-drs', 'nova_drs'))]
    with open(CONSTRAINTS, 'w') as handle:
        handle.write('# pip freeze of .venv-cloud (tests/integration/cloud.py freeze)\n')
        handle.write('\n'.join(lines) + '\n')


def register_test_plugins():
    """Make the test-only virt driver loadable by nova-compute in .venv-cloud.

    A .pth in .venv-cloud's site-packages puts tests/integration on the path
    and adds ``nova.virt.drs_trace`` -> ``trace_driver`` to nova-drs's import
    aliases (nova imports drivers under ``nova.virt.`` only), so
    ``compute_driver = drs_trace.TraceLoadDriver`` loads it without touching
    nova. Production installs never see it.
    """
    site = _run([os.path.join(BIN, 'python'), '-c',
                 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                'find .venv-cloud site-packages').strip()
    path = os.path.join(site, 'nova_drs_integration.pth')
    text = (HERE + '\n' + "import nova_drs.resources.alias as alias; "
            "alias.install(**{'nova.virt.drs_trace': 'trace_driver'})\n")
    # Atomically: another cloud's services may be reading it as they start.
    with open(path + '.%d' % os.getpid(), 'w') as handle:
        handle.write(text)
    os.replace(path + '.%d' % os.getpid(), path)


def _run(cmd, what, env=None, log_path=None):
    result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if log_path:
        with open(log_path, 'a') as handle:
            handle.write('$ %s\n%s%s\n' % (' '.join(cmd), result.stdout, result.stderr))
    if result.returncode:
        raise CloudError('%s failed (exit %d): %s\n%s' % (
            what, result.returncode, ' '.join(cmd), (result.stdout + result.stderr)[-3000:]))
    return result.stdout


def _plugin_env(workdir, extra):
    """Environment for devstack/lib/nova-drs.sh functions run through the shim."""
    env = dict(os.environ)
    env.update({
        'PIP': '%s -m pip' % os.path.join(BIN, 'python'),
        'NOVA_DRS_DIR': ROOT,
        'NOVA_DRS_PYTHON': os.path.join(BIN, 'python'),
        'NOVA_DRS_BIN_DIR': BIN,
        'NOVA_DRS_CONSTRAINTS': CONSTRAINTS,
        'LOGDIR': os.path.join(workdir, 'logs'),
        'PIDDIR': os.path.join(workdir, 'pids'),
        'DATABASE_USER': DB['user'], 'DATABASE_PASSWORD': DB['password'],
        'DATABASE_HOST': DB['host'], 'DATABASE_PORT': str(DB['port']),
    })
    env.update(extra)
    return env


def plugin_functions(functions, env):
    """Run devstack plugin functions (``configure_nova_drs``...) outside devstack."""
    script = 'set -euo pipefail\nsource %s\nsource %s\n%s\n' % (
        os.path.join(ROOT, 'devstack', 'lib', 'shim.sh'),
        os.path.join(ROOT, 'devstack', 'lib', 'nova-drs.sh'), '\n'.join(functions))
    return _run(['bash', '-c', script], 'devstack plugin: %s' % ' '.join(functions), env=env)


class Cloud:
    """Builds, starts and stops the mini-cloud under ``workdir``.

    ``name`` names its databases (``name_*``) and RabbitMQ vhost (default
    NOVA_DRS_CLOUD_NAME or nova_drs_ci); ``computes`` the trace-driver
    nova-computes it starts (default three; none for a control plane whose
    computes another tier starts, as tests/libvirt/nova_hosts.py does).
    """

    def __init__(self, workdir=WORKDIR, log=print, name=NAME, computes=COMPUTES):
        self.workdir = workdir
        self.name = name
        self.db_prefix = name + '_'
        self.rabbit = dict(RABBIT, vhost=name)
        self.computes = tuple(computes)
        self.log = log
        self.logs = os.path.join(workdir, 'logs')
        self.pids = os.path.join(workdir, 'pids')
        self.etc = os.path.join(workdir, 'etc')
        self.nova_conf = os.path.join(self.etc, 'nova', 'nova.conf')
        self.timings = []
        self.started_at = 0.0
        self.state_file = os.path.join(workdir, 'cloud.json')
        self.ports = {}
        self.auth_url = None

    # ----------------------------------------------------------- processes
    def _spawn(self, name, cmd, env=None):
        log_file = open(os.path.join(self.logs, name + '.log'), 'ab')
        full_env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get('PATH', ''))
        # .venv-cloud holds no byte-code (ensure_venv): each service writes
        # what it compiles, whatever the caller's environment says.
        full_env.pop('PYTHONDONTWRITEBYTECODE', None)
        full_env.update(env or {})
        process = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=full_env,
                                   start_new_session=True, cwd=self.workdir)
        log_file.close()
        with open(os.path.join(self.pids, name + '.pid'), 'w') as handle:
            handle.write(str(process.pid))
        return process

    def _uwsgi(self, name, module, port, env):
        cmd = [os.path.join(BIN, 'uwsgi'), '--http-socket', '127.0.0.1:%d' % port,
               '--module', module, '--home', VENV, '--master', '--processes', '1',
               '--threads', '4', '--enable-threads', '--lazy-apps', '--die-on-term',
               '--need-app', '--buffer-size', '65535', '--add-header', 'Connection: close',
               '--pythonpath', HERE]
        return self._spawn(name, cmd, env)

    def running(self):
        """{name: pid} of the processes with a pid file, alive or not."""
        found = {}
        if os.path.isdir(self.pids):
            for entry in sorted(os.listdir(self.pids)):
                if entry.endswith('.pid'):
                    with open(os.path.join(self.pids, entry)) as handle:
                        text = handle.read().strip()
                    if text.isdigit():
                        found[entry[:-4]] = int(text)
        return found

    def stop_process(self, name, timeout=15):
        pid = self.running().get(name)
        if pid is None:
            return
        if _pid_alive(pid):
            self._signal(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _pid_alive(pid):
                self.log('minicloud: %s (pid %d) still alive after %ds: SIGKILL'
                         % (name, pid, timeout))
                self._signal(pid, signal.SIGKILL)
        os.unlink(os.path.join(self.pids, name + '.pid'))

    @staticmethod
    def _signal(pid, sig):
        # Each process was started in its own session, so its group id is its
        # pid: signal that group (uwsgi workers, nova's children) and nothing else.
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            os.kill(pid, sig)

    def down(self):
        # Computes and the daemon first (they talk to the rest), APIs last.
        # BMCs before the computes, or a daemon's wake could start one again.
        first = ('bmc-', 'nova-compute', 'nova-loadbalancer', 'nova-drs')
        for name in sorted(self.running(), key=lambda n: (not n.startswith(first), n)):
            self.stop_process(name)
        if os.path.exists(self.state_file):
            os.unlink(self.state_file)

    def failed(self):
        """Names of started processes that died."""
        return [name for name, pid in self.running().items() if not _pid_alive(pid)]

    # --------------------------------------------------------------- phases
    def _phase(self, name, func, *args):
        start = time.monotonic()
        try:
            return func(*args)
        finally:
            elapsed = time.monotonic() - start
            self.timings.append((name, elapsed))
            self.log('minicloud: %-28s %6.1f s' % (name, elapsed))

    def healthy(self):
        """A cloud this workdir started is running (its state written, every
        process it started alive but the computes, which the daemon powers off
        and on): ``up`` keeps it."""
        states = self.status()
        return (os.path.exists(self.state_file) and bool(states)
                and all(state == 'running' for name, (state, _pid) in states.items()
                        if not name.startswith('nova-compute')))

    def up(self):
        """Start everything afresh; on any failure stop what started and raise
        CloudError. The previous run's logs are kept in ``logs.previous``."""
        total = time.monotonic()
        self.started_at = time.time()
        if self.running():
            self.down()
        if os.path.isdir(self.workdir):
            previous = self.logs + '.previous'
            shutil.rmtree(previous, ignore_errors=True)
            if os.path.isdir(self.logs):
                shutil.move(self.logs, previous)
            for entry in os.listdir(self.workdir):
                path = os.path.join(self.workdir, entry)
                if path != previous:
                    (shutil.rmtree if os.path.isdir(path) else os.unlink)(path)
        for path in (self.logs, self.pids, self.etc):
            os.makedirs(path)
        try:
            self._phase('venv', ensure_venv, self.log)
            self._phase('mariadb+rabbitmq', self._backing_services)
            self._phase('keystone', self._keystone)
            self._phase('catalog', self._catalog)
            self._phase('nova/drs config (plugin)', self._nova_config)
            self._phase('db syncs + cells', self._databases)
            self._phase('apis up', self._apis)
            self._phase('conductor+scheduler', self._control)
            self._phase('%d computes up' % len(self.computes), self._computes)
            self._phase('BMCs (IPMI, Redfish)', self._bmcs)
            self._phase('image+flavor', self._resources)
            self._phase('nova-loadbalancer', self._daemon)
        except BaseException as exc:
            self.log('minicloud: FAILED (%s); service logs in %s' % (exc, self.logs))
            self.down()
            raise
        self.timings.append(('total', time.monotonic() - total))
        self.log('minicloud: up in %.1f s; logs in %s' % (self.timings[-1][1], self.logs))
        self._save_state()
        self.write_credentials()
        return self

    def write_credentials(self):
        """``openrc`` (source it) and ``clouds.yaml`` (``--os-cloud minicloud``)
        in the workdir, for the admin; mode 600, they hold the password."""
        values = {'auth_url': self.auth_url, 'password': PASSWORD, 'region': REGION}
        files = {
            'openrc': ('export OS_AUTH_URL=%(auth_url)s\n'
                       'export OS_USERNAME=admin OS_PASSWORD=%(password)s\n'
                       'export OS_PROJECT_NAME=admin OS_USER_DOMAIN_NAME=Default\n'
                       'export OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=%(region)s\n'
                       'export OS_IDENTITY_API_VERSION=3\n' % values),
            'clouds.yaml': ('clouds:\n  minicloud:\n    region_name: %(region)s\n'
                            '    auth:\n      auth_url: %(auth_url)s\n'
                            '      username: admin\n      password: %(password)s\n'
                            '      project_name: admin\n      user_domain_name: Default\n'
                            '      project_domain_name: Default\n' % values)}
        for name, text in files.items():
            path = os.path.join(self.workdir, name)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 'w') as out:
                out.write(text)
        return {name: os.path.join(self.workdir, name) for name in files}

    def describe(self):
        """What an operator needs to use the running cloud, one line each."""
        lines = ['minicloud: keystone %s (admin / %s)' % (self.auth_url, PASSWORD),
                 'minicloud: source %s, or --os-cloud minicloud with OS_CLIENT_CONFIG_FILE=%s'
                 % (os.path.join(self.workdir, 'openrc'),
                    os.path.join(self.workdir, 'clouds.yaml'))]
        for name in ('metrics-loadbalancer', 'metrics-collector'):
            if name in self.ports:
                lines.append('minicloud: %s http://127.0.0.1:%d/metrics'
                             % (name.split('-', 1)[1], self.ports[name]))
        lines.append('minicloud: logs in %s' % self.logs)
        return lines

    def _save_state(self):
        state = {'auth_url': self.auth_url, 'ports': self.ports, 'logs': self.logs,
                 'daemon_error': self.daemon_error, 'bmcs': self.bmcs,
                 'image': self.image, 'flavor': self.flavor, 'workdir': self.workdir,
                 'timings': self.timings, 'started_at': self.started_at,
                 'name': self.name, 'computes': self.computes}
        with open(self.state_file, 'w') as handle:
            json.dump(state, handle, indent=2)

    @classmethod
    def load(cls, workdir=WORKDIR):
        with open(os.path.join(workdir, 'cloud.json')) as handle:
            state = json.load(handle)
        cloud = cls(workdir, name=state.get('name', NAME),
                    computes=state.get('computes', COMPUTES))
        cloud.auth_url, cloud.ports = state['auth_url'], state['ports']
        cloud.image, cloud.flavor = state['image'], state['flavor']
        cloud.daemon_error = state['daemon_error']
        cloud.bmcs = state['bmcs']
        cloud.started_at = state.get('started_at', 0.0)
        cloud.nova_conf = os.path.join(cloud.etc, 'nova', 'nova.conf')
        cloud.nova_db_conf = os.path.join(cloud.etc, 'nova', 'nova-db.conf')
        return cloud

    def _backing_services(self):
        if not _listening(DB['host'], DB['port']):
            raise CloudError('MariaDB is not listening on %(host)s:%(port)s; start it '
                             '(tools/ensure-services.sh does)' % DB)
        if not _listening(RABBIT['host'], RABBIT['port']):
            raise CloudError('RabbitMQ is not listening on %(host)s:%(port)s; start it '
                             '(tools/ensure-services.sh does)' % RABBIT)
        connection = pymysql.connect(host=DB['host'], port=DB['port'], user=DB['user'],
                                     password=DB['password'])
        try:
            with connection.cursor() as cursor:
                for name in ('keystone', 'glance', 'placement', 'nova_api', 'nova',
                             'nova_cell0'):
                    cursor.execute('DROP DATABASE IF EXISTS `%s%s`' % (self.db_prefix, name))
                    cursor.execute('CREATE DATABASE `%s%s` CHARACTER SET utf8'
                                   % (self.db_prefix, name))
        finally:
            connection.close()
        vhost = self.rabbit['vhost']
        ctl = shutil.which('rabbitmqctl')
        if ctl is None:
            raise CloudError('rabbitmqctl not found: cannot create the RabbitMQ vhost %r'
                             % vhost)
        log = os.path.join(self.logs, 'setup.log')
        if vhost in _run([ctl, '-q', 'list_vhosts'], 'rabbitmqctl list_vhosts').split():
            _run([ctl, '-q', 'delete_vhost', vhost], 'rabbitmqctl delete_vhost', log_path=log)
        _run([ctl, '-q', 'add_vhost', vhost], 'rabbitmqctl add_vhost', log_path=log)
        _run([ctl, '-q', 'set_permissions', '-p', vhost, RABBIT['user'], '.*', '.*', '.*'],
             'rabbitmqctl set_permissions', log_path=log)

    def _db_url(self, name):
        return _db_url(name, self.db_prefix)

    @property
    def transport_url(self):
        return 'rabbit://%(user)s:%(password)s@%(host)s:%(port)s/%(vhost)s' % self.rabbit

    # ------------------------------------------------------------- keystone
    def _authtoken(self, user):
        return {'www_authenticate_uri': self.auth_url, 'auth_url': self.auth_url,
                'auth_type': 'password', 'username': user, 'password': PASSWORD,
                'project_name': 'service', 'user_domain_name': 'Default',
                'project_domain_name': 'Default', 'region_name': REGION}

    def _keystone(self):
        port = self.ports['keystone'] = _free_port()
        self.auth_url = 'http://127.0.0.1:%d/v3' % port
        conf_dir = os.path.join(self.etc, 'keystone')
        conf = os.path.join(conf_dir, 'keystone.conf')
        _write_ini(conf, {
            'DEFAULT': {'debug': 'false'},
            'database': {'connection': self._db_url('keystone')},
            'token': {'provider': 'fernet'},
            'fernet_tokens': {'key_repository': os.path.join(conf_dir, 'fernet-keys')},
            'fernet_receipts': {'key_repository': os.path.join(conf_dir, 'fernet-keys')},
            'credential': {'key_repository': os.path.join(conf_dir, 'credential-keys')},
            'cache': {'enabled': 'true', 'backend': 'dogpile.cache.memory'},
            'identity': {'password_hash_rounds': '4'},
        })
        manage = [os.path.join(BIN, 'keystone-manage'), '--config-file', conf]
        log = os.path.join(self.logs, 'keystone-manage.log')
        user = os.environ.get('USER') or 'root'
        _run(manage + ['db_sync'], 'keystone-manage db_sync', log_path=log)
        for command in ('fernet_setup', 'credential_setup'):
            _run(manage + [command, '--keystone-user', user, '--keystone-group', user],
                 'keystone-manage ' + command, log_path=log)
        _run(manage + ['bootstrap', '--bootstrap-password', PASSWORD,
                       '--bootstrap-region-id', REGION,
                       '--bootstrap-admin-url', self.auth_url,
                       '--bootstrap-public-url', self.auth_url,
                       '--bootstrap-internal-url', self.auth_url],
             'keystone-manage bootstrap', log_path=log)
        self._uwsgi('keystone', 'keystone.wsgi.api:application', port,
                    {'OS_KEYSTONE_CONFIG_FILES': conf})
        self._wait_http('keystone', self.auth_url, timeout=60)

    def _wait_http(self, name, url, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if name in self.failed():
                raise CloudError('%s exited; see %s' % (name, self._log(name)))
            try:
                requests.get(url, timeout=5)
                return
            except requests.RequestException:
                time.sleep(0.5)
        raise CloudError('%s did not answer %s within %ds; see %s'
                         % (name, url, timeout, self._log(name)))

    def _log(self, name):
        return os.path.join(self.logs, name + '.log')

    def session(self, user='admin', project='admin', password=PASSWORD):
        auth = v3.Password(auth_url=self.auth_url, username=user, password=password,
                           project_name=project, user_domain_name='Default',
                           project_domain_name='Default')
        return ks_session.Session(auth=auth)

    def client(self, service_type, user='admin', project='admin', **kwargs):
        return adapter.Adapter(self.session(user, project), service_type=service_type,
                               interface='public', region_name=REGION, **kwargs)

    def _catalog(self):
        """Services, endpoints and users with ONE keystoneauth session (one token)."""
        for name in ('placement', 'glance', 'network', 'nova'):
            self.ports[name] = _free_port()
        identity = self.client('identity', raise_exc=True)

        def create(path, key, body):
            return identity.post(path, json={key: body}).json()[key]['id']

        def find(path, key, name):
            return [item['id'] for item in identity.get(path + '?name=' + name).json()[key]
                    if item['name'] == name][0]

        endpoints = {
            ('placement', 'placement'): 'http://127.0.0.1:%d' % self.ports['placement'],
            ('glance', 'image'): 'http://127.0.0.1:%d' % self.ports['glance'],
            ('neutron', 'network'): 'http://127.0.0.1:%d' % self.ports['network'],
            ('nova', 'compute'): 'http://127.0.0.1:%d/v2.1' % self.ports['nova'],
        }
        for (name, service_type), url in endpoints.items():
            service = create('/services', 'service', {'name': name, 'type': service_type})
            for interface in ('public', 'internal', 'admin'):
                create('/endpoints', 'endpoint', {
                    'service_id': service, 'interface': interface, 'url': url,
                    'region_id': REGION})
        admin_role = find('/roles', 'roles', 'admin')
        member_role = find('/roles', 'roles', 'member')
        domain = 'default'
        service_project = create('/projects', 'project',
                                 {'name': 'service', 'domain_id': domain})
        demo_project = create('/projects', 'project', {'name': 'demo', 'domain_id': domain})
        for name in SERVICE_USERS:
            user = create('/users', 'user',
                          {'name': name, 'password': PASSWORD, 'domain_id': domain})
            identity.put('/projects/%s/users/%s/roles/%s'
                         % (service_project, user, admin_role))
        demo = create('/users', 'user',
                      {'name': 'demo', 'password': PASSWORD, 'domain_id': domain})
        identity.put('/projects/%s/users/%s/roles/%s' % (demo_project, demo, member_role))

    # ----------------------------------------------------------------- nova
    def _nova_config(self):
        register_test_plugins()
        for name in ('metrics-loadbalancer', 'metrics-collector'):
            self.ports[name] = _free_port()
        nova_dir = os.path.join(self.etc, 'nova')
        self.nova_conf = os.path.join(nova_dir, 'nova.conf')
        self.nova_db_conf = os.path.join(nova_dir, 'nova-db.conf')
        api_dir = os.path.join(self.etc, 'nova-api')
        os.makedirs(api_dir)
        self.api_paste = os.path.join(api_dir, 'api-paste.ini')
        shutil.copy(os.path.join(VENV, 'etc', 'nova', 'api-paste.ini'), self.api_paste)
        _write_ini(self.nova_conf, {
            'DEFAULT': {'transport_url': self.transport_url,
                        'compute_driver': 'drs_trace.TraceLoadDriver',
                        'state_path': os.path.join(self.workdir, 'nova'),
                        'my_ip': '127.0.0.1', 'graceful_shutdown_timeout': '3',
                        'report_interval': '5', 'service_down_time': '20',
                        # The resource tracker runs the nova-drs monitor: a
                        # load sample every 5 s (one trace sample).
                        'update_resources_interval': '5',
                        'debug': 'false', 'use_rootwrap_daemon': 'false',
                        # No agent behind the network stand-in sends
                        # network-vif-plugged: nova must not wait for it.
                        'vif_plugging_timeout': '0'},
            'api': {'auth_strategy': 'keystone'},
            'wsgi': {'api_paste_config': self.api_paste},
            'keystone_authtoken': self._authtoken('nova'),
            'placement': self._authtoken('nova'),
            'neutron': self._authtoken('nova'),
            'glance': {'region_name': REGION},
            'oslo_concurrency': {'lock_path': os.path.join(self.workdir, 'nova', 'locks')},
            'conductor': {'workers': '1'},
            'scheduler': {'workers': '1', 'discover_hosts_in_cells_interval': '-1'},
            'vnc': {'enabled': 'false'},
            'cinder': {'region_name': REGION},
        })
        _write_ini(self.nova_db_conf, {
            'database': {'connection': self._db_url('nova')},
            'api_database': {'connection': self._db_url('nova_api')},
        })
        # nova-drs: exactly what the devstack plugin does at post-config.
        self.drs_env = _plugin_env(self.workdir, {
            'NOVA_CONF': self.nova_conf, 'NOVA_API_PASTE_INI': self.api_paste,
            'NOVA_DRS_CONF_DIR': os.path.join(self.etc, 'nova-drs'),
            'NOVA_DRS_STATE_PATH': os.path.join(self.workdir, 'nova-drs'),
            'NOVA_DRS_DB_NAME': self.db_prefix + 'drs', 'NOVA_DRS_LB_PERIOD': '5',
            'NOVA_DRS_METRICS_PORT': str(self.ports['metrics-loadbalancer']),
            'NOVA_DRS_COLLECTOR_METRICS_PORT': str(self.ports['metrics-collector']),
            'NOVA_DRS_REQUEST_TIMEOUT': '60',
            'NOVA_DRS_AUTH_URL': self.auth_url, 'NOVA_DRS_AUTH_USERNAME': 'admin',
            'NOVA_DRS_AUTH_PASSWORD': PASSWORD, 'NOVA_DRS_AUTH_PROJECT_NAME': 'admin',
            'NOVA_DRS_AUTH_DOMAIN_NAME': 'Default', 'NOVA_DRS_REGION_NAME': REGION,
            'ENABLED_SERVICES': 'nova-loadbalancer,nova-drs-collector',
            # nova's databases are in nova-db.conf here (computes get none).
            'NOVA_DRS_COLLECTOR_CONF_FILES': '%s %s' % (self.nova_conf, self.nova_db_conf),
        })
        plugin_functions(['configure_nova_drs', 'init_nova_drs'], self.drs_env)
        # What a local.conf [[post-config]] would add: a host that does not
        # come back is declared in error within 90 s, not 15 min (a wake
        # here takes 10-30 s on an idle machine; a CI run, four lanes on two
        # cores, measured 46 s from an admin's unsuspend to active); one
        # that does not go down (its BMC silent) within 30 s (the option's
        # minimum), not 10 min; a woken
        # host may be suspended again after 30 s, not 30 min (the traces run
        # 60x faster: one 5-minute sample per 5 s).
        plugin_functions(['iniset "$(_nova_drs_conf_file)" loadbalancer wake_timeout %d'
                          % WAKE_TIMEOUT,
                          'iniset "$(_nova_drs_conf_file)" loadbalancer suspend_timeout %d'
                          % SUSPEND_TIMEOUT,
                          'iniset "$(_nova_drs_conf_file)" loadbalancer host_cooldown %d'
                          % HOST_COOLDOWN], self.drs_env)

    def _nova_cmd(self, binary, *extra_files):
        cmd = [os.path.join(BIN, binary), '--config-file', self.nova_conf]
        for path in extra_files:
            cmd += ['--config-file', path]
        return cmd

    def _databases(self):
        log = os.path.join(self.logs, 'manage.log')
        placement_conf = os.path.join(self.etc, 'placement', 'placement.conf')
        _write_ini(placement_conf, {
            'DEFAULT': {'debug': 'false'},
            'placement_database': {'connection': self._db_url('placement')},
            'api': {'auth_strategy': 'keystone'},
            'keystone_authtoken': self._authtoken('placement'),
        })
        _run([os.path.join(BIN, 'placement-manage'), '--config-file', placement_conf,
              'db', 'sync'], 'placement-manage db sync', log_path=log)
        glance_dir = os.path.join(self.etc, 'glance')
        images = os.path.join(self.workdir, 'glance')
        _write_ini(os.path.join(glance_dir, 'glance-api.conf'), {
            'DEFAULT': {'debug': 'false', 'enabled_backends': 'fs:file'},
            'database': {'connection': self._db_url('glance')},
            'keystone_authtoken': self._authtoken('glance'),
            'paste_deploy': {'flavor': 'keystone',
                             'config_file': os.path.join(glance_dir, 'glance-api-paste.ini')},
            'glance_store': {'default_backend': 'fs'},
            'fs': {'filesystem_store_datadir': os.path.join(images, 'images')},
            'os_glance_staging_store': {'filesystem_store_datadir':
                                        os.path.join(images, 'staging')},
            'os_glance_tasks_store': {'filesystem_store_datadir': os.path.join(images, 'tasks')},
        })
        shutil.copy(os.path.join(VENV, 'etc', 'glance', 'glance-api-paste.ini'), glance_dir)
        _run([os.path.join(BIN, 'glance-manage'), '--config-file',
              os.path.join(glance_dir, 'glance-api.conf'), 'db_sync'],
             'glance-manage db_sync', log_path=log)
        manage = self._nova_cmd('nova-manage', self.nova_db_conf)
        _run(manage + ['api_db', 'sync'], 'nova-manage api_db sync', log_path=log)
        _run(manage + ['cell_v2', 'map_cell0', '--database_connection',
                       self._db_url('nova_cell0')],
             'nova-manage cell_v2 map_cell0', log_path=log)
        _run(manage + ['cell_v2', 'create_cell', '--name', 'cell1', '--verbose'],
             'nova-manage cell_v2 create_cell', log_path=log)
        _run(manage + ['db', 'sync'], 'nova-manage db sync', log_path=log)

    def _apis(self):
        self._uwsgi('placement', 'placement.wsgi.api:application', self.ports['placement'],
                    {'OS_PLACEMENT_CONFIG_DIR': os.path.join(self.etc, 'placement')})
        self._uwsgi('glance', 'glance.wsgi.api:application', self.ports['glance'],
                    {'OS_GLANCE_CONFIG_DIR': os.path.join(self.etc, 'glance')})
        self._uwsgi('network', 'network_stub:application', self.ports['network'], {})
        self._uwsgi('nova-api', 'nova.wsgi.osapi_compute:application', self.ports['nova'],
                    {'OS_NOVA_CONFIG_DIR': os.path.join(self.etc, 'nova-api'),
                     'OS_NOVA_CONFIG_FILES': ';'.join(
                         [self.api_paste, self.nova_conf, self.nova_db_conf])})
        for name in ('placement', 'glance', 'network', 'nova'):
            self._wait_http('nova-api' if name == 'nova' else name,
                            'http://127.0.0.1:%d/' % self.ports[name], timeout=120)

    def _wait_log(self, name, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if name in self.failed():
                raise CloudError('%s exited; see %s' % (name, self._log(name)))
            with open(self._log(name), errors='replace') as handle:
                if text in handle.read():
                    return
            time.sleep(0.5)
        raise CloudError('%s did not log %r within %ds; see %s'
                         % (name, text, timeout, self._log(name)))

    def _control(self):
        for binary in ('nova-conductor', 'nova-scheduler'):
            self._spawn(binary, self._nova_cmd(binary, self.nova_db_conf))
        # Computes started before this lose their first ping and wait a timeout.
        self._wait_log('nova-conductor', 'Starting conductor node', 120)
        self._wait_log('nova-scheduler', 'Starting scheduler node', 120)

    def compute_conf(self, host):
        return os.path.join(self.etc, 'nova-' + host, 'compute.conf')

    def start_compute(self, host, vcpus=None):
        """Start (or start again) the nova-compute process called ``host``."""
        vcpus_file = os.path.join(self.workdir, host, 'vcpus')
        if vcpus is not None:
            os.makedirs(os.path.dirname(vcpus_file), exist_ok=True)
            with open(vcpus_file, 'w') as handle:
                handle.write(str(vcpus))
        state = os.path.join(self.workdir, host)
        conf = self.compute_conf(host)
        if not os.path.exists(conf):
            os.makedirs(os.path.join(state, 'instances'), exist_ok=True)
            _write_ini(conf, {'DEFAULT': {'host': host, 'state_path': state,
                                          'instances_path': os.path.join(state, 'instances')}})
        env = {'NOVA_DRS_TRACE_DIR': TRACE_DIR,
               'NOVA_DRS_TRACE_SECONDS': str(SECONDS_PER_SAMPLE)}
        if os.path.exists(vcpus_file):  # a power cycle keeps the host's size
            with open(vcpus_file) as handle:
                env['NOVA_DRS_TRACE_VCPUS'] = handle.read().strip()
        return self._spawn('nova-compute-' + host, self._nova_cmd('nova-compute', conf), env)

    def add_compute(self, host, vcpus, timeout=180):
        """Start one more nova-compute (``vcpus`` vCPUs) and map it into cell1."""
        pid = self.running().get('nova-compute-' + host)
        if pid is None or not _pid_alive(pid):
            self.start_compute(host, vcpus)
        compute = self.client('compute', raise_exc=False)
        manage = self._nova_cmd('nova-manage', self.nova_db_conf)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if 'nova-compute-' + host in self.failed():
                raise CloudError('nova-compute-%s exited; see %s'
                                 % (host, self._log('nova-compute-' + host)))
            _run(manage + ['cell_v2', 'discover_hosts'], 'nova-manage cell_v2 discover_hosts',
                 log_path=os.path.join(self.logs, 'manage.log'))
            # Listed as a hypervisor is not enough: a boot onto it needs its host mapping.
            mapped = _run(manage + ['cell_v2', 'list_hosts'], 'nova-manage cell_v2 list_hosts')
            found = compute.get('/os-hypervisors/detail?hypervisor_hostname_pattern=' + host)
            if (' %s ' % host) in mapped and found.ok and found.json()['hypervisors']:
                return found.json()['hypervisors'][0]
            time.sleep(2)
        raise CloudError('hypervisor %s did not show up within %ds' % (host, timeout))

    def manage(self, *args):
        """``nova-drs-manage ARGS`` as an operator runs it on a controller; its output."""
        return _run([os.path.join(BIN, 'nova-drs-manage'), '--config-file', self.nova_conf,
                     '--config-file', self.nova_db_conf] + list(args),
                    'nova-drs-manage ' + ' '.join(args),
                    log_path=os.path.join(self.logs, 'manage.log'))

    def start_daemon(self, name, *extra_conf):
        """One more ``nova-loadbalancer`` (``name``), as devstack starts it plus
        ``extra_conf``, serving no metrics: the devstack daemon's port is taken
        (two daemons on one host need two ports, as the option says)."""
        no_metrics = os.path.join(self.etc, 'nova-drs', 'no-metrics.conf')
        with open(no_metrics, 'w') as handle:
            handle.write('[drs_metrics]\nport = 0\n')
        cmd = [os.path.join(BIN, 'nova-loadbalancer'), '--config-file', self.nova_conf,
               '--config-file', os.path.join(self.etc, 'nova-drs', 'nova-drs.conf')]
        for path in extra_conf + (no_metrics,):
            cmd += ['--config-file', path]
        return self._spawn(name, cmd)

    def _computes(self):
        for host in self.computes:
            self.start_compute(host)
        compute = self.client('compute', raise_exc=False)
        manage = self._nova_cmd('nova-manage', self.nova_db_conf)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            for name in ('nova-compute-' + host for host in self.computes):
                if name in self.failed():
                    raise CloudError('%s exited; see %s' % (name, self._log(name)))
            _run(manage + ['cell_v2', 'discover_hosts'], 'nova-manage cell_v2 discover_hosts',
                 log_path=os.path.join(self.logs, 'manage.log'))
            response = compute.get('/os-hypervisors')
            if response.ok and len(response.json()['hypervisors']) == len(self.computes):
                return
            time.sleep(2)
        raise CloudError('%d hypervisors did not show up within 180 s; see %s'
                         % (len(self.computes), self.logs))

    def _bmcs(self):
        """One IPMI BMC per host and one Redfish emulator for all, on loopback."""
        env = {'PYTHONPATH': ROOT, 'NOVA_DRS_CLOUD_DIR': self.workdir,
               'MINICLOUD_BMC_USER': BMC_USER, 'MINICLOUD_BMC_PASSWORD': BMC_PASSWORD}
        module = [sys.executable, '-m', 'tests.integration.bmc']
        self.bmcs = {'ipmi': {}, 'redfish': _free_port()}
        if not self.computes:
            self.bmcs['redfish'] = None
            return
        for host in self.computes:
            self.bmcs['ipmi'][host] = _free_udp_port()
            self._spawn('bmc-ipmi-' + host, module + [
                'ipmi', '--host', host, '--port', str(self.bmcs['ipmi'][host])], env)
        self._spawn('bmc-redfish', module + [
            'redfish', '--hosts', ','.join(self.computes), '--port', str(self.bmcs['redfish'])],
            env)
        for host in self.computes:
            for kind in ('ipmi', 'redfish'):
                self._wait_power(kind, host)

    def bmc_options(self, host, kind):
        """Options of the shipped ``ipmi``/``redfish`` power driver for ``host``'s BMC."""
        if kind == 'ipmi':
            return {'address': '127.0.0.1', 'port': self.bmcs['ipmi'][host],
                    'username': BMC_USER, 'password': BMC_PASSWORD}
        return {'url': 'http://127.0.0.1:%d' % self.bmcs['redfish'],
                'system_id': host, 'username': BMC_USER,
                'password': BMC_PASSWORD, 'verify': False}

    def power_status(self, kind, host):
        """The host's power as the shipped driver reads it from its BMC (on/off/...)."""
        from oslo_config import cfg

        from nova_drs import conf as drs_conf
        from nova_drs.power import base as power_base
        from nova_drs.power import loader as power_loader
        conf = cfg.ConfigOpts()
        drs_conf.register_opts(conf)
        conf([], project='nova-drs-minicloud', default_config_files=[])
        driver = power_loader.get_driver(kind, conf)
        return driver.status(power_base.PowerTarget(name=host,
                                                    options=self.bmc_options(host, kind)))

    def _wait_power(self, kind, host, timeout=60):
        name = 'bmc-ipmi-' + host if kind == 'ipmi' else 'bmc-redfish'
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if name in self.failed():
                raise CloudError('%s exited; see %s' % (name, self._log(name)))
            try:
                last = self.power_status(kind, host)
                if last == 'on':
                    return
            except Exception as exc:  # not ready yet: keep the reason for the message
                last = exc
            time.sleep(0.5)
        raise CloudError('%s BMC of %s did not report power on within %ds (last: %s); see %s'
                         % (kind, host, timeout, last, self._log(name)))

    def _resources(self):
        image = self.client('image', raise_exc=True)
        created = image.post('/v2/images', json={
            'name': 'cirros-fake', 'disk_format': 'raw', 'container_format': 'bare',
            'visibility': 'public'}).json()
        image.put('/v2/images/%s/file' % created['id'], data=b'\0' * 1024,
                  headers={'Content-Type': 'application/octet-stream'})
        self.image = created['id']
        compute = self.client('compute', raise_exc=True)
        self.flavor = compute.post('/flavors', json={'flavor': {
            'name': 'drs.tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}}).json()['flavor']['id']

    def _daemon(self):
        """Start nova-loadbalancer as devstack would; a failure is recorded, not fatal.

        The base cloud stays usable; the tests that need the daemon fail
        with ``daemon_error`` (its log tail) as their message.
        """
        self.daemon_error = None
        plugin_functions(['start_nova_drs'], self.drs_env)
        time.sleep(5)
        for name in ('nova-drs-collector', 'nova-loadbalancer'):
            if name in self.failed():
                with open(self._log(name), errors='replace') as handle:
                    tail = handle.read()[-1500:]
                error = '%s exited at start (%s):\n%s' % (name, self._log(name), tail)
                self.log('minicloud: WARNING ' + error)
                if name == 'nova-loadbalancer':
                    self.daemon_error = error

    def status(self):
        return {name: ('running' if _pid_alive(pid) else 'DEAD', pid)
                for name, pid in self.running().items()}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv else 'status'
    if command == 'up' and argv[1:] in ([], ['--fresh']):
        cloud = Cloud()
        if argv[1:] != ['--fresh'] and cloud.healthy():
            cloud = Cloud.load()
            cloud.write_credentials()
            print('minicloud: already up, kept (--fresh rebuilds it)')
        else:
            try:
                cloud.up()
            except CloudError as exc:
                print('minicloud: %s' % exc, file=sys.stderr)
                return 1
        print('\n'.join(cloud.describe()))
        return 0
    if command == 'down':
        Cloud().down()
        return 0
    if command == 'status':
        cloud = Cloud()
        states = cloud.status()
        if not states:
            print('minicloud: nothing running (workdir %s)' % cloud.workdir)
        for name, (state, pid) in states.items():
            print('%-28s %-8s %d' % (name, state, pid))
        return 0 if all(state == 'running' for state, _pid in states.values()) else 1
    if command == 'start-compute' and len(argv) == 2:
        # What the test power driver runs to "power on" a compute.
        Cloud.load().start_compute(argv[1])
        return 0
    if command == 'freeze':
        freeze_constraints()
        return 0
    print('usage: minicloud up [--fresh]|down|status|freeze|start-compute HOST',
          file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
