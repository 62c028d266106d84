"""``nova-drs-collector``: stores compute statistics samples in the DRS database."""

import sys

from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import service

from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api
from nova_drs.observability import metrics
from nova_drs.stats import collector

CONF = drs_conf.CONF
LOG = logging.getLogger(__name__)


def main(argv=None):
    logging.register_options(CONF)
    argv = sys.argv[1:] if argv is None else argv
    try:
        CONF(argv, project='nova', prog='nova-drs-collector')
        drs_conf.validate(CONF)
    except (cfg.Error, drs_conf.ConfigError) as exc:
        print('nova-drs-collector: %s' % exc, file=sys.stderr)
        return 2
    logging.setup(CONF, 'nova-drs-collector')
    try:
        database = db_api.Database.from_conf(CONF)
        database.engine  # noqa: B018  (fail now with a clear message)
    except db_api.DatabaseError as exc:
        print('nova-drs-collector: %s' % exc, file=sys.stderr)
        return 1
    try:
        metrics.start_exporter(CONF, database)
    except OSError as exc:
        print('nova-drs-collector: [drs_metrics] cannot serve metrics: %s' % exc,
              file=sys.stderr)
        return 1
    launcher = service.launch(CONF, collector.CollectorService(CONF, database),
                              restart_method='mutate')
    launcher.wait()
    return 0


if __name__ == '__main__':
    sys.exit(main())
