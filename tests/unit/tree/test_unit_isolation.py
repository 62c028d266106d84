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

"""The unit tier reaches no service and runs no outside tool (issue 29).

``make unit`` runs with nothing started: no MariaDB, PostgreSQL, Redis or
RabbitMQ, no BMC simulator or sshd, no shellcheck or systemd-analyze. A test
that needs one belongs in tests/component, which may import the unit tier's
helpers but not the other way round. This reads every module under
tests/unit (AST, no import) and names each line that would bring a component
back: an import of tests.services, tests.component or a client library of
those servers, a start of a tests.peers simulator, an outside tool's name as
a whole string (what ``shutil.which`` or ``subprocess`` are given), or a URL
with a server's own port. A tripwire, not a proof: running the tier in a
network namespace with no service and no tool is the proof (README).
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
UNIT = ROOT / 'tests' / 'unit'

#: Modules whose import means a component: the helpers of the real services
#: and the component tier, and the client libraries of the servers.
FORBIDDEN_MODULES = ('tests.services', 'tests.component', 'pymysql', 'MySQLdb', 'psycopg2',
                     'psycopg', 'redis', 'kombu', 'amqp', 'pika')
#: tests.peers' simulator and server starters (its free_port, UdpListener and
#: _keygen stay on loopback without a peer process).
PEER_STARTERS = re.compile(r'^(start_\w+|read_bmc_state|add_chassis_power)$')
#: Outside tools, as a whole string or a path's last part.
TOOLS = frozenset(('shellcheck', 'systemd-analyze', 'sshd', 'ipmitool', 'sushy-emulator',
                   'mysqld', 'mariadbd', 'postgres', 'redis-server', 'rabbitmq-server'))
#: A URL of RabbitMQ, or one naming a server's own port (a bare host:port is
#: no URL a library would connect to: a configuration error test).
SERVICE_URL = re.compile(r'(rabbit://|amqp://|://[^\s/?]*:(3306|5432|6379|5672)(?!\d))')


def _module_names(node):
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + ['%s.%s' % (node.module, alias.name) for alias in node.names]
    return []


def _forbidden_import(name):
    return any(name == bad or name.startswith(bad + '.') for bad in FORBIDDEN_MODULES)


def _peer_start(node):
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id == 'peers' and PEER_STARTERS.match(node.attr)
    if isinstance(node, ast.ImportFrom) and node.module == 'tests.peers':
        return any(PEER_STARTERS.match(alias.name) for alias in node.names)
    return False


def _component_string(node):
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    text = node.value
    if text in TOOLS or text.rsplit('/', 1)[-1] in TOOLS:
        return 'runs %s' % text
    for text_line in text.splitlines():
        if SERVICE_URL.search(text_line):
            return 'names a server: %s' % text_line.strip()
    return None


def findings(source, name):
    """One line per place in ``source`` that brings a component into the unit tier."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, 'lineno', 0)
        for module in _module_names(node):
            if _forbidden_import(module):
                found.append('%s:%d imports %s' % (name, line, module))
        if _peer_start(node):
            found.append('%s:%d starts a tests.peers peer' % (name, line))
        reason = _component_string(node)
        if reason:
            found.append('%s:%d %s' % (name, line, reason))
    return sorted(set(found))


def _unit_modules():
    this = pathlib.Path(__file__).resolve()
    for path in sorted(UNIT.rglob('*.py')):
        if path.resolve() != this:
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_the_unit_tier_reaches_no_component():
    modules = list(_unit_modules())
    assert len(modules) > 100
    found = [line for name, source in modules for line in findings(source, name)]
    assert found == [], ('move these tests to tests/component (make component):\n'
                         + '\n'.join(found))


@pytest.mark.parametrize('source', [
    'from tests import services\n',
    'import tests.services\n',
    'from tests.component.db import conftest\n',
    'import redis\n',
    'import pymysql.err\n',
    'from kombu import Connection\n',
    'peer = peers.start_sshd(path)\n',
    'from tests.peers import start_ipmi_bmc\n',
    "subprocess.run(['shellcheck', '-x', script])\n",
    "shutil.which('systemd-analyze')\n",
    "run(['/usr/sbin/sshd', '-D'])\n",
    "URL = 'mysql+pymysql://root@127.0.0.1:3306/drs'\n",
    "URL = 'redis://127.0.0.1:6379?namespace=x'\n",
    "conf.write('[DEFAULT]\\ntransport_url = rabbit://guest:guest@127.0.0.1/\\n')\n",
    "conf.write('[drs_coordination]\\nbackend_url = redis://127.0.0.1:6379\\n')\n",
])
def test_each_kind_of_component_is_found(source):
    assert findings(source, 'planted.py') != []


@pytest.mark.parametrize('source', [
    'from tests import peers\nport = peers.free_port()\nlistener = peers.UdpListener()\n',
    "URL = 'mysql+pymysql://root@127.0.0.1:9/nova_drs'  # nothing listens: an error test\n",
    "('127.0.0.1:6379', 'unknown scheme')\n",
    '"""Needs shellcheck? No: tests/component does."""\n',
    "sqlite = 'sqlite:///%s' % path\n",
])
def test_what_stays_on_loopback_is_not_flagged(source):
    assert findings(source, 'fine.py') == []
