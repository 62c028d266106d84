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

"""Publishing statistics samples as oslo.messaging notifications."""

import oslo_messaging as messaging

EVENT_TYPE = 'drs.host.sample'
#: A monitor publishes as ``nova-drs-monitor.<its nova host>``; the
#: collector stores a sample only for that host (``sender_host``).
PUBLISHER_PREFIX = 'nova-drs-monitor.'

_transports = {}


def transport(conf):
    """The process' notification transport (one per config object).

    Shared by publisher and collector so both ends meet on in-process
    transports (``fake://`` in tests).
    """
    key = id(conf)
    if key not in _transports:
        _transports[key] = messaging.get_notification_transport(conf)
    return _transports[key]


class SamplePublisher:
    """Sends one sample per node and period on ``[drs_stats] topic``."""

    def __init__(self, conf, host):
        self._notifier = messaging.Notifier(
            transport(conf), publisher_id=PUBLISHER_PREFIX + host,
            driver='messagingv2', topics=[conf.drs_stats.topic])

    def publish(self, sample):
        self._notifier.info({}, EVENT_TYPE, sample)


def sender_host(publisher_id):
    """The host a sample's publisher is (None if not a nova-drs monitor)."""
    if not isinstance(publisher_id, str) or not publisher_id.startswith(PUBLISHER_PREFIX):
        return None
    return publisher_id[len(PUBLISHER_PREFIX):] or None
