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

"""``nova-loadbalancer``: the DRS daemon (observe, decide, act every period).

Reads nova.conf-style files (``--config-file``); credentials come from
``[drs_auth]``, never from code. ``--dry-run`` prints the plan of one cycle
and exits without changing anything.
"""

import json
import sys

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from openstack import connection
from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import service as oslo_service

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs import loadbalancer_plugins
from nova_drs.clients import nova_api
from nova_drs.cmd import startup_checks
from nova_drs.conf import startup
from nova_drs.daemon import launcher as daemon_launcher
from nova_drs.daemon import power as daemon_power
from nova_drs.daemon import service
from nova_drs.db import api as db_api
from nova_drs.db import migration
from nova_drs.observability import metrics

CONF = drs_conf.CONF
LOG = logging.getLogger(__name__)

cli_opts = [
    cfg.BoolOpt('dry-run', default=False,
                help='Print the plan of one cycle and exit; change nothing.'),
]


PROG = 'nova-loadbalancer'


def nova_from_conf(conf):
    """The compute and placement client from ``[drs_auth]``; ConfigError if unusable."""
    group = conf.drs_auth
    if not group.auth_type:
        raise exception.ConfigError(
            '[drs_auth] auth_type is not set: nova-loadbalancer needs keystone '
            'credentials for the compute and placement APIs')
    try:
        auth = ks_loading.load_auth_from_conf_options(conf, 'drs_auth')
        session = ks_loading.load_session_from_conf_options(conf, 'drs_auth', auth=auth)
    except (ks_exc.ClientException, cfg.Error) as exc:
        raise exception.ConfigError('[drs_auth] is not usable: %s' % exc) from None
    return nova_api.NovaAPI(connection.Connection(
        session=session, region_name=group.region_name, interface=group.valid_interfaces,
        app_name=PROG), retries=nova_api.retry_options(group))


def dry_run_report(summary):
    """What ``--dry-run`` prints: the cycle's summary as JSON, actions as the API shows them."""
    return json.dumps(dict(summary, actions=[a.to_json() for a in summary['actions']]),
                      indent=2, default=str)


def _fail(message, code=1):
    print('%s: %s' % (PROG, message), file=sys.stderr)
    return code


def _start(argv):
    """Everything checked before the first cycle: (policy, nova, database)."""
    startup.parse(CONF, argv, PROG)
    startup.validate(CONF)
    startup_checks.check_plugins(CONF)
    policy = loadbalancer_plugins.load_policy(CONF)
    nova = nova_from_conf(CONF)
    startup.validate(CONF)  # the auth plugin registered its own options
    startup_checks.check_paths(CONF, lock_file=not CONF.dry_run)
    startup.setup_logging(CONF, PROG)
    startup_checks.probe_database(CONF)
    database = db_api.Database.from_conf(CONF)
    if migration.current_revision(database) != migration.head_revision():
        raise exception.ConfigError('the DRS database is not at the current schema; run '
                                    '"nova-drs-manage db sync" first')
    daemon_power.check_keys(CONF, database)
    return policy, nova, database


def main(argv=None):
    logging.register_options(CONF)
    CONF.register_cli_opts(cli_opts)
    argv = sys.argv[1:] if argv is None else argv
    try:
        policy, nova, database = _start(argv)
    except (exception.ConfigError, exception.DatabaseError) as exc:
        return _fail(exc)
    power = daemon_power.drivers_for(CONF, database)
    if CONF.dry_run:
        balancer = service.LoadBalancer(CONF, nova, database, policy, power)
        summary = balancer.run_cycle(dry_run=True)
        if 'skipped' in summary:
            return _fail('could not observe the cloud, no plan: %s' % summary['skipped'])
        print(dry_run_report(summary))
        return 0
    from nova_drs.daemon import coordination
    try:
        coordinator = coordination.Coordinator(CONF)
        coordinator.start()
    except exception.CoordinationError as exc:
        return _fail(exc)
    try:
        metrics.start_exporter(CONF, database)
    except OSError as exc:
        coordinator.stop()
        return _fail('[drs_metrics] cannot serve metrics: %s' % exc)

    def build():
        """The cycle, from the options as they are now (again after SIGHUP)."""
        return service.LoadBalancer(CONF, nova, database, loadbalancer_plugins.load_policy(CONF),
                                    daemon_power.drivers_for(CONF, database), coordinator)

    launcher = oslo_service.launch(
        CONF, daemon_launcher.LoadBalancerService(CONF, build, coordinator),
        restart_method='mutate')
    return launcher.wait() or 0


if __name__ == '__main__':
    sys.exit(main())
