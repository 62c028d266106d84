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

"""Base class for functional tests on real nova, in one process.

nova's own functional fixtures (API, conductor, scheduler, placement and
fake-driver computes) boot a real cloud; nova-drs is switched on the way an
operator does it: the options of ``etc/nova-drs/nova.conf.drs`` (the file the
README tells operators to copy) and the api-paste.ini nova-api loads.
Tests that need no server take api_base.DrsApiTestCase instead: the same
configuration (DrsSetupMixin) on nova-api alone, without booting the cloud.
"""

import configparser
import inspect
import os
import sys
import tempfile
import time

from nova.tests.functional import fixtures as func_fixtures
from nova.tests.functional import integrated_helpers
from nova.tests.functional.api import client
from oslo_config import cfg
from oslo_messaging import opts as messaging_opts

from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api
from nova_drs.db import migration
from nova_drs.power import sealing


def _require_green_transactions():
    """Fail the tier loudly if oslo.db was imported before eventlet patched.

    See tests/functional/__init__.py: an OS-thread local would make nova's
    greenthreads share their database transactions.
    """
    from eventlet import corolocal
    from oslo_db.sqlalchemy import enginefacade
    if not issubclass(enginefacade._TransactionContextTLocal, corolocal.local):
        raise RuntimeError(
            'oslo.db was imported before eventlet patched the process: nova '
            'greenthreads would share database transactions; import nova\'s '
            'monkey_patch first (tests/functional/__init__.py does)')


_require_green_transactions()

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPERATOR_CONF = os.path.join(REPO_ROOT, 'etc', 'nova-drs', 'nova.conf.drs')
# nova's wheel installs its api-paste.ini under <venv>/etc/nova, not next to
# site-packages where nova's ConfFixture looks for it.
NOVA_API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')
# nova's api-paste.ini plus the nova-drs loadbalancer filter: the file the
# README tells operators to use.
DRS_API_PASTE = os.path.join(REPO_ROOT, 'etc', 'nova-drs', 'api-paste.ini')


# nova 33 added api= and host= to the live-migration helper; nova 32's has neither.
_LIVE_MIGRATE_TAKES_HOST = 'host' in inspect.signature(
    integrated_helpers.InstanceHelperMixin._live_migrate).parameters
# nova 34 waits for an ERROR server's fault (wait_for_fault_key); nova 32 and 33 do not.
_SERVER_WAIT_TAKES_FAULT_KEY = 'wait_for_fault_key' in inspect.signature(
    integrated_helpers.InstanceHelperMixin._wait_for_server_parameter).parameters
#: nova's helpers look at a server every 0.5 s; ours first after this, then
#: twice as long each time, up to 0.5 s.
FIRST_SERVER_POLL = 0.02


def operator_options(path=OPERATOR_CONF):
    """(group, name, value) for every option set in an operator's config file."""
    parser = configparser.ConfigParser(interpolation=None, default_section='__none__')
    with open(path) as handle:
        parser.read_file(handle)
    return [(group, name, value)
            for group in parser.sections() for name, value in parser.items(group)]


class DrsSetupMixin:
    """nova-drs switched on as an operator does it, before nova's test base starts.

    Both functional bases (this module's full cloud and api_base's API alone)
    take it, so a test sees the same nova.conf, DRS database and hosts
    whichever nova it runs on.
    """

    COMPUTE_DRIVER = 'fake.FakeLiveMigrateDriver'
    COMPUTE_HOSTS = ('host1', 'host2', 'host3')
    API_PASTE = DRS_API_PASTE
    #: Extra nova.conf options a test needs: {(group, name): value}.
    EXTRA_FLAGS = {}

    def setUp(self):
        self.state_dir = tempfile.mkdtemp(prefix='nova-drs-test-')
        self._apply_operator_config()
        super().setUp()

    def _apply_operator_config(self):
        self.flags(compute_driver=self.COMPUTE_DRIVER)
        self.flags(api_paste_config=self.API_PASTE, group='wsgi')
        options = {(group, name): value for group, name, value in operator_options()}
        options[('drs', 'state_path')] = self.state_dir
        # One process plays nova-api and nova-loadbalancer: it holds both keys.
        self.seal_key_id = sealing.generate_key_pair(
            os.path.join(self.state_dir, 'seal.key'), os.path.join(self.state_dir, 'seal.pub'))
        options[('drs_power', 'seal_public_key_file')] = os.path.join(self.state_dir, 'seal.pub')
        options[('drs_power', 'unseal_private_key_files')] = [
            os.path.join(self.state_dir, 'seal.key')]
        options.update(self.EXTRA_FLAGS)
        # nova registers [oslo_messaging_notifications] only once its RPC starts.
        for group, opts in messaging_opts.list_opts():
            if group == 'oslo_messaging_notifications':
                drs_conf.CONF.register_opts(opts, group=group)
        for (group, name), value in options.items():
            group = None if group == 'DEFAULT' else group
            opt = drs_conf.CONF._get_opt_info(name, group)['opt']
            if isinstance(opt, cfg.MultiStrOpt) and isinstance(value, str):
                value = [value]  # a single line in the file, like oslo.config reads it
            self.flags(**{name: value}, group=group)
        self.drs_db = db_api.Database.from_conf(drs_conf.CONF)
        migration.sync(self.drs_db)
        self.addCleanup(self.drs_db.dispose)

    def _clear_attrs(self):
        # pytest keeps the bound test method on the instance and deletes it
        # after the test; nova's cleanup would delete it first.
        keep = self.__dict__.get(self._testMethodName)
        super()._clear_attrs()
        if keep is not None:
            self.__dict__[self._testMethodName] = keep


class DrsFunctionalTestCase(DrsSetupMixin, integrated_helpers._IntegratedTestBase):
    """A real nova cloud with COMPUTE_HOSTS fake computes and nova-drs enabled."""

    ADMIN_API = True
    REQUIRES_LOCKING = False
    microversion = 'latest'
    #: The flavor of servers created without one (nova's m1.tiny).
    DEFAULT_FLAVOR = '1'

    def useFixture(self, fixture):
        # nova 33+ keeps its placement fixture as self.placement_fixture (this
        # same object); nova 32 keeps only its .api, and the daemon's client
        # needs the fixture's endpoint and token (daemon_support.py).
        if isinstance(fixture, func_fixtures.PlacementFixture):
            self.placement_fixture = fixture
        return super().useFixture(fixture)

    if not _LIVE_MIGRATE_TAKES_HOST:
        def _live_migrate(self, server, migration_expected_state='completed',
                          server_expected_state='ACTIVE', api=None, host=None):
            """nova 32: the helper of nova 33 and 34, with a target host and an API."""
            (api or self.api).post_server_action(
                server['id'], {'os-migrateLive': {'host': host, 'block_migration': 'auto'}})
            self._wait_for_migration_status(server, [migration_expected_state])
            return self._wait_for_state_change(server, server_expected_state)

    def _wait_for_server_parameter(self, server, expected_params, max_retries=10, api=None,
                                   **kwargs):
        """nova's helper, with its deadline (``max_retries`` looks 0.5 s apart),
        looking sooner: a fake-driver server is built in a fraction of a second,
        and nova's first look after 0.5 s made each server a test boots cost
        that much wall time (15 s of a 76 s run of test_daemon_cycle.py). nova's own
        check and failure message end the wait."""
        client = api or getattr(self, 'admin_api', self.api)
        wants_fault = (expected_params.get('status') == 'ERROR' and _SERVER_WAIT_TAKES_FAULT_KEY
                       and kwargs.get('wait_for_fault_key', True))
        deadline = time.monotonic() + max_retries * 0.5
        pause = FIRST_SERVER_POLL
        while time.monotonic() < deadline:
            current = client.get_server(server['id'])
            if all(current[key] == value for key, value in expected_params.items()) and (
                    not wants_fault or 'fault' in current):
                break
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
        return super()._wait_for_server_parameter(server, expected_params, max_retries=1,
                                                  api=api, **kwargs)

    def _build_server(self, name=None, image_uuid=None, flavor_id=None, networks=None,
                      az=None, host=None):
        # nova's helper takes the first flavor listed (by flavorid): a flavor a
        # test created comes first whenever its UUID starts with 0 (1 in 16),
        # and every other server would then silently get it.
        return super()._build_server(name, image_uuid, flavor_id or self.DEFAULT_FLAVOR,
                                     networks, az, host)

    def _setup_compute_service(self):
        self.computes = {}
        for host in self.COMPUTE_HOSTS:
            self._start_compute(host)
        return self.computes[self.COMPUTE_HOSTS[0]]

    def wait_for_migration_status(self, server, statuses, timeout=60):
        """The server's newest migration once in one of ``statuses``.

        nova lists a server's migrations newest first (microversion 2.59).
        nova's ``_wait_for_migration_status`` gives up after 5 s, which a
        loaded CI machine (the integration tier alongside) can exceed before
        a live migration is even running.
        """
        deadline = time.monotonic() + timeout
        seen = None
        while time.monotonic() < deadline:
            migrations = self.admin_api.api_get(
                '/os-migrations?instance_uuid=%s' % server['id']).body['migrations']
            if migrations:
                seen = migrations[0]['status']
                if seen in statuses:
                    return migrations[0]
            time.sleep(0.2)
        self.fail('migration of %s not in %s within %d s (last: %s)'
                  % (server['id'], statuses, timeout, seen))

    def complete_live_migration(self, server):
        """Force the server's live migration to complete; its migration record.

        FakeLiveMigrateDriver keeps a live migration running until forced, or
        for 5 s: a loaded machine may see it completed already.
        """
        newest = self.wait_for_migration_status(server, ['running', 'completed'])
        if newest['status'] == 'running':
            try:
                self.api.force_complete_migration(server['id'], newest['id'])
            except client.OpenStackApiException as error:
                self.assertEqual(400, error.response.status_code)  # completed meanwhile
        return self.wait_for_migration_status(server, ['completed'])

    def server_host(self, server_id):
        server = self.admin_api.get_server(server_id)
        return server['OS-EXT-SRV-ATTR:host']
