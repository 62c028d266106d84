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

"""Alert when a host uses more than 100 % of its (lowered) overcommitted capacity.

Logged at warning and sent as the oslo.messaging notification
``drs.overcommit.exceeded`` (priority WARN) on nova's notification
transport, once per host and resource each time it crosses the line.
"""

import sys
import threading

from oslo_log import log as logging
import oslo_messaging

LOG = logging.getLogger(__name__)

EVENT_TYPE = 'drs.overcommit.exceeded'


def _notifier(conf, publisher_id):
    # nova is only used when the process already loaded it: nova-loadbalancer
    # (the daemon's overcommit sync) must not import nova, and eventlet with it.
    rpc = sys.modules.get('nova.rpc')
    if rpc is not None and rpc.LEGACY_NOTIFIER is not None:  # inside a nova service
        return rpc.LEGACY_NOTIFIER.prepare(publisher_id=publisher_id)
    transport = oslo_messaging.get_notification_transport(conf)
    return oslo_messaging.Notifier(transport, publisher_id=publisher_id)


def _context():
    nova_context = sys.modules.get('nova.context')
    return nova_context.get_admin_context() if nova_context is not None else {}


def payload(host, resource, cap):
    return {'host': host, 'resource': resource, 'physical': cap.physical,
            'allocation_ratio': cap.ratio, 'total': cap.total, 'used': cap.used,
            'free': cap.free, 'percent': round(cap.percent, 1)}


def alert(conf, host, resource, cap, publisher_id='nova-drs'):
    """Log and notify; a broken notification transport is logged, never raised."""
    LOG.warning('Host %(host)s uses %(percent).1f%% of its %(resource)s capacity '
                '(%(used)s of %(total)s at allocation ratio %(ratio)s): it accepts '
                'no new instance until usage drops below the total',
                {'host': host, 'percent': cap.percent, 'resource': resource,
                 'used': cap.used, 'total': cap.total, 'ratio': cap.ratio})
    try:
        _notifier(conf, publisher_id).warn(_context(), EVENT_TYPE,
                                           payload(host, resource, cap))
    except Exception as exc:
        LOG.warning('Could not send %s notification for host %s: %s',
                    EVENT_TYPE, host, exc)


class ExceededTracker:
    """Alerts once when a host goes over 100 %, again only after it recovered."""

    def __init__(self, conf, publisher_id='nova-drs'):
        self._conf = conf
        self._publisher_id = publisher_id
        self._over = set()
        self._lock = threading.Lock()

    def watching(self, host, resource):
        """True while ``host`` is known to be over 100 % for ``resource``."""
        return (host, resource) in self._over

    def observe(self, host, resource, exceeded, capacity):
        """``capacity()`` builds the accounting.Capacity, only when alerting."""
        key = (host, resource)
        if not exceeded and key not in self._over:
            return
        with self._lock:
            if not exceeded:
                self._over.discard(key)
                return
            if key in self._over:
                return
            self._over.add(key)
        alert(self._conf, host, resource, capacity(), self._publisher_id)
