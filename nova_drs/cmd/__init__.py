"""Console scripts.

eventlet prints an 8-line deprecation banner when it is imported. The
commands that can do without it never import it (nova-loadbalancer, the db
and stats commands of nova-drs-manage, nova-drs-sim); the ones whose
libraries still import it (oslo.service and oslo.messaging in
nova-drs-collector, nova itself in ``nova-drs-manage overcommit``, tooz in the
daemon's leader election) must not show operators a warning meant for
developers.
"""

import warnings

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
