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

"""Records the ratios each instance lands with, from nova's versioned notifications.

An oslo.messaging notification endpoint: the nova-drs daemon listens on
nova's ``versioned_notifications`` topic with it. Landing events record
(or re-record, after a move) the instance's host, flavor size and the
host's current ratios; ``instance.delete.end`` forgets the instance.

A notification may be handled late (the daemon was busy, down or behind on
the queue) or twice (at-least-once delivery), after the host's ratio was
raised: ``instance.create.end`` then keeps the ratios the instance is
already recorded with on that host (by ``overcommit sync`` or an earlier
delivery), else takes those in force at its launch from the ratio history
(as the sync does). Recording the new ratio would count the instance
smaller than its guaranteed share and let the scheduler over-admit.
"""

from oslo_log import log as logging
import oslo_messaging
from oslo_utils import timeutils

from nova_drs.db import overcommit as db_overcommit

LOG = logging.getLogger(__name__)

#: Versioned notifications after which the instance runs on ``payload.host``.
#: Not ``instance.live_migration_post.end``: the source emits it with the
#: source host still in the payload. Evacuation ends with rebuild.end on the
#: destination; cold migration and resize with resize_finish.end.
LANDING_EVENTS = (
    'instance.create.end',
    'instance.live_migration_post_dest.end',
    'instance.resize_finish.end',
    'instance.rebuild.end',
    'instance.unshelve.end',
)
DELETE_EVENTS = ('instance.delete.end',)
CREATE_EVENT = 'instance.create.end'


def _data(obj):
    return (obj or {}).get('nova_object.data', obj or {})


class OvercommitRecorder:
    """Notification endpoint: ``info(ctxt, publisher_id, event_type, payload, metadata)``.

    ``ratio_lookup(host) -> (cpu_ratio, ram_ratio)`` gives the host's current
    effective ratios (nova_view.RatioLookup in production).
    """

    filter_rule = oslo_messaging.NotificationFilter(
        event_type='^(%s)$' % '|'.join(
            event.replace('.', r'\.') for event in LANDING_EVENTS + DELETE_EVENTS))

    def __init__(self, database, ratio_lookup):
        self._database = database
        self._ratio_lookup = ratio_lookup

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        try:
            self.handle(event_type, payload)
        except Exception:
            LOG.exception('Could not record overcommit ratios from %s', event_type)
        return oslo_messaging.NotificationResult.HANDLED

    def handle(self, event_type, payload):
        data = _data(payload)
        instance_uuid = data.get('uuid')
        if not instance_uuid:
            return
        if event_type in DELETE_EVENTS:
            db_overcommit.forget(self._database, instance_uuid)
            return
        host = data.get('host')
        if event_type not in LANDING_EVENTS or not host:
            return
        flavor = _data(data.get('flavor'))
        cpu_ratio, ram_ratio = self._ratio_lookup(host)
        db_overcommit.note_ratios(self._database, host, cpu_ratio, ram_ratio,
                          timeutils.utcnow().replace(microsecond=0))
        if event_type == CREATE_EVENT:
            cpu_ratio, ram_ratio = (self._deployed_with(instance_uuid, host, data)
                                    or (cpu_ratio, ram_ratio))
        db_overcommit.record(self._database, instance_uuid, host, flavor.get('vcpus'),
                     flavor.get('memory_mb'), cpu_ratio, ram_ratio, event_type)
        LOG.debug('Recorded %s on %s with cpu ratio %s, ram ratio %s (%s)',
                  instance_uuid, host, cpu_ratio, ram_ratio, event_type)

    def _deployed_with(self, instance_uuid, host, data):
        """(cpu, ram) ratios a created instance landed with, when already known."""
        row = db_overcommit.get(self._database, instance_uuid)
        if row is not None and row['host'] == host:
            return row['cpu_allocation_ratio'], row['ram_allocation_ratio']
        launched = _launched_at(data)
        if launched is None:
            return None
        return db_overcommit.ratios_at(self._database, host, launched)


def _launched_at(data):
    """The payload's ``launched_at`` as naive UTC (the ratio history's), or None."""
    try:
        when = timeutils.parse_isotime(data['launched_at'])
    except (KeyError, TypeError, ValueError):
        return None
    return timeutils.normalize_time(when)
