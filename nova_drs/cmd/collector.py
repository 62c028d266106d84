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

"""``nova-drs-collector``: stores compute statistics samples in the DRS database."""

import signal
import sys

from oslo_log import log as logging
import oslo_messaging
from oslo_service import service

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.cmd import startup_checks
from nova_drs.conf import startup
from nova_drs.db import api as db_api
from nova_drs.observability import metrics
from nova_drs.stats import collector

CONF = drs_conf.CONF
LOG = logging.getLogger(__name__)
PROG = 'nova-drs-collector'


def main(argv=None):
    logging.register_options(CONF)
    # nova's services send on exchange "nova" (nova.config.parse_args sets
    # this default): without it the recorder's pool queue is bound to
    # oslo.messaging's "openstack" exchange and never gets nova's notifications.
    oslo_messaging.set_transport_defaults(control_exchange='nova')
    argv = sys.argv[1:] if argv is None else argv
    try:
        startup.parse(CONF, argv, PROG)
        startup.validate(CONF)
        startup_checks.check_plugins(CONF)
        startup_checks.check_paths(CONF)
        startup.setup_logging(CONF, PROG)
        startup_checks.probe_database(CONF)
        database = db_api.Database.from_conf(CONF)
    except (exception.ConfigError, exception.DatabaseError) as exc:
        print('%s: %s' % (PROG, exc), file=sys.stderr)
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
    # The services stopped within the grace: oslo.service's shutdown alarm
    # (graceful_shutdown_timeout) must not kill the exiting interpreter.
    signal.alarm(0)
    return 0


if __name__ == '__main__':
    sys.exit(main())
