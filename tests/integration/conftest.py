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

"""The integration tier: one real mini-cloud per pytest session (see cloud.py).

``make integration`` runs two sessions at once, each on its own cloud
(``NOVA_DRS_CLOUD_DIR``, ``NOVA_DRS_CLOUD_NAME``; the Makefile's
``INTEGRATION_DAEMON``): test_daemon.py then test_daemon_failures.py (the
second picks up where the first left its cloud), and every other file.

``NOVA_DRS_CLOUD_REUSE=1`` runs the tests against a cloud already started
with ``tools/minicloud up`` and leaves it running (for developing tests).
"""

import os

import pytest

from tests.integration import cloud as minicloud


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'integration: needs the multi-process mini-cloud (make integration)')
    # tox.ini leaves schemathesis's pytest plugin unloaded (its import costs
    # every pytest process); test_api_schema.py's @schema.parametrize needs
    # it, or it collects one test that checks nothing.
    config.pluginmanager.import_plugin('schemathesis.pytest.plugin')


@pytest.fixture(scope='session')
def cloud():
    """The running mini-cloud; brought up once, torn down (every PID) at the end."""
    if os.environ.get('NOVA_DRS_CLOUD_REUSE') == '1':
        yield minicloud.Cloud.load()
        return
    instance = minicloud.Cloud(log=lambda line: print(line, flush=True))
    try:
        instance.up()
    except minicloud.CloudError as exc:
        pytest.fail('mini-cloud did not come up: %s\nservice logs: %s'
                    % (exc, instance.logs), pytrace=False)
    yield instance
    dead = instance.failed()
    instance.down()
    print('minicloud: phase timings: %s' % ', '.join(
        '%s %.1fs' % (name, seconds) for name, seconds in instance.timings))
    if dead:
        print('minicloud: processes not running at the end (suspended hosts are '
              'expected here): %s; logs in %s' % (', '.join(dead), instance.logs))


# Last, in this order: the daemon scenarios power hosts off and on; the
# overcommit scenario adds a fourth compute, outside the DRS cluster, which
# nova's scheduler would otherwise pick for the servers of suspended hosts.
LAST = ('test_daemon.py', 'test_daemon_failures.py', 'test_overcommit.py')


def pytest_collection_modifyitems(session, config, items):
    """Sorted by LAST, otherwise as collected (a stable sort keeps file order)."""
    items.sort(key=lambda item: LAST.index(item.path.name) + 1
               if item.path.name in LAST else 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.sections.append(('mini-cloud', 'service logs of every process: %s'
                                % minicloud.Cloud().logs))
