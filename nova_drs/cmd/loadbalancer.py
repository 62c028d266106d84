"""``nova-loadbalancer``: the DRS daemon (observe, decide, act every period).

Reads nova.conf-style files (``--config-file``); credentials come from
``[drs_auth]``, never from code. ``--dry-run`` prints the plan of one cycle
and exits without changing anything.
"""

import json
import sys
import threading

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.daemon import nova_api
from nova_drs.daemon import power as daemon_power
from nova_drs.daemon import service
from nova_drs.db import api as db_api
from nova_drs.db import migration
from nova_drs import loadbalancer_plugins
from nova_drs.observability import metrics
from nova_drs.scale import scalers

CONF = drs_conf.CONF
LOG = logging.getLogger(__name__)

cli_opts = [
    cfg.BoolOpt('dry-run', default=False,
                help='Print the plan of one cycle and exit; change nothing.'),
]


def nova_from_conf(conf):
    group = conf.drs_auth
    auth = ks_loading.load_auth_from_conf_options(conf, 'drs_auth')
    session = ks_loading.load_session_from_conf_options(conf, 'drs_auth', auth=auth)
    common = {'interface': group.valid_interfaces, 'region_name': group.region_name}
    return nova_api.NovaAPI(adapter.Adapter(session, service_type='compute', **common),
                            adapter.Adapter(session, service_type='placement',
                                            raise_exc=False, **common))


def _fail(message, code=1):
    print('nova-loadbalancer: %s' % message, file=sys.stderr)
    return code


def main(argv=None):
    logging.register_options(CONF)
    CONF.register_cli_opts(cli_opts)
    argv = sys.argv[1:] if argv is None else argv
    try:
        CONF(argv, project='nova', prog='nova-loadbalancer')
        drs_conf.validate(CONF)
        policy = loadbalancer_plugins.load_policy(CONF)
        scalers.load(CONF.drs_scale.scaler)
    except (cfg.Error, drs_conf.ConfigError, ValueError) as exc:
        return _fail(exc, 2)
    logging.setup(CONF, 'nova-loadbalancer')
    try:
        database = db_api.Database.from_conf(CONF)
        if migration.current_revision(database) != migration.head_revision():
            return _fail('the DRS database is not at the current schema; run '
                         '"nova-drs-manage db sync" first')
        nova = nova_from_conf(CONF)
    except (db_api.DatabaseError, ks_exc.ClientException) as exc:
        return _fail(exc)
    except cfg.Error as exc:
        return _fail('[drs_auth] is incomplete: %s' % exc, 2)
    power = daemon_power.drivers_for(CONF, database)
    if CONF.dry_run:
        balancer = service.LoadBalancer(CONF, nova, database, policy, power)
        print(json.dumps(balancer.run_cycle(dry_run=True), indent=2, default=str))
        return 0
    from nova_drs.daemon import coordination
    try:
        coordinator = coordination.Coordinator(CONF)
        coordinator.start()
    except coordination.CoordinationError as exc:
        return _fail(exc)
    balancer = service.LoadBalancer(CONF, nova, database, policy, power, coordinator)
    try:
        metrics.start_exporter(CONF, database)
    except OSError as exc:
        coordinator.stop()
        return _fail('[drs_metrics] cannot serve metrics: %s' % exc)
    stop = threading.Event()
    LOG.info('nova-loadbalancer started, period %ds, automation %s',
             CONF.loadbalancer.period, CONF.loadbalancer.automation)
    try:
        while not stop.is_set():
            try:
                LOG.info('cycle: %s', balancer.run_cycle())
            except Exception:
                LOG.exception('cycle failed; the next one starts from a fresh view')
            stop.wait(CONF.loadbalancer.period)
    except KeyboardInterrupt:
        pass
    finally:
        coordinator.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
