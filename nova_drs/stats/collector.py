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

"""``nova-drs-collector``: stores published samples, records deployed-with ratios.

A batch notification listener on ``[drs_stats] topic`` hands up to
``batch_size`` samples at a time to one bulk insert; the MAC address a host
reports (wake_address plugin) goes into its ``drs_hosts`` record. A sample
is stored only for the host that published it (the notification's
``publisher_id``, ``nova-drs-monitor.<host>``), so one misconfigured
compute cannot write load figures, or a wake MAC, for another; refused
samples (another host's, malformed, out of range) are logged and counted
in ``nova_drs_samples_refused{reason}``. A timer
purges samples older than ``retention``. A second listener, in its own pool
(other consumers of nova's notifications still get every message), hands
nova's versioned notifications to the OvercommitRecorder, so each instance is
recorded with the ratios of the host it lands on, when it lands.
"""

import threading

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_service import service

from nova_drs import exception
from nova_drs.conf import startup
from nova_drs.db import api as db_api
from nova_drs.db import hosts as db_hosts
from nova_drs.db import statistics as db_statistics
from nova_drs.observability import metrics
from nova_drs.overcommit import recorder
from nova_drs.stats import ingest
from nova_drs.stats import publisher

LOG = logging.getLogger(__name__)
RECORDER_POOL = 'nova-drs-overcommit-recorder'


def notification_problems(conf):
    """Why nova's versioned notifications would not reach the recorder."""
    from nova.conf import notifications as nova_notifications
    if 'notifications' not in conf:
        nova_notifications.register_opts(conf)
    publisher.transport(conf)  # registers [oslo_messaging_notifications]
    problems = []
    drivers = [d for d in conf.oslo_messaging_notifications.driver if d != 'noop']
    if not drivers:
        problems.append('[oslo_messaging_notifications] driver is not set, so nova sends '
                        'no notifications (set driver = messagingv2)')
    if conf.notifications.notification_format == 'unversioned':
        problems.append('[notifications] notification_format = unversioned, so nova sends '
                        'no versioned notifications (set it to both or versioned)')
    return problems


def nova_ratio_lookup(conf):
    """RatioLookup on nova's databases, or None with the reason logged."""
    from nova_drs.overcommit import nova_databases
    from nova_drs.overcommit import nova_view
    try:
        nova_databases.admin_context(conf)
    except Exception as exc:
        LOG.warning('nova-drs collector: deployed-with ratios are NOT recorded: %s', exc)
        return None
    return nova_view.RatioLookup(conf)


class Collector:
    """Turns batches of samples into database rows."""

    def __init__(self, database):
        self.database = database
        self._known_macs = {}

    def ingest(self, samples):
        hosts, instances, errors = ingest.insert_samples(self.database, samples)
        for error in errors:
            refused(error)
        self._store_wake_addresses(samples)
        return hosts, instances

    def receive(self, messages):
        """Store the samples of notifications ``messages`` that name their sender."""
        samples = []
        for message in messages:
            try:
                samples.append(sent_by_its_host(message))
            except exception.InvalidSample as exc:
                refused(exc)
        return self.ingest(samples) if samples else (0, 0)

    def _store_wake_addresses(self, samples):
        for sample in samples:
            if not isinstance(sample, dict):
                continue
            host, mac = sample.get('host'), sample.get('mac_to_wake')
            if not host or not mac or self._known_macs.get(host) == mac:
                continue
            db_hosts.ensure(self.database, host, sample.get('hypervisor_hostname'))
            db_hosts.set_fields(self.database, host, mac_to_wake=mac)
            self._known_macs[host] = mac
            LOG.info('nova-drs collector: host %s wakes on MAC %s', host, mac)

    def purge(self, retention):
        hosts, instances = db_statistics.purge_older_than(self.database, retention)
        if hosts or instances:
            LOG.info('nova-drs collector purged %d host and %d instance samples older '
                     'than %d s', hosts, instances, retention)
        return hosts, instances


def sent_by_its_host(message):
    """The sample of notification ``message``; InvalidSample unless it names its publisher.

    Binds a sample to the nova host whose monitor sent it: the host field
    of the payload must be the host in the ``publisher_id``.
    """
    sample = message.get('payload')
    sender = publisher.sender_host(message.get('publisher_id'))
    named = sample.get('host') if isinstance(sample, dict) else None
    if sender is None or named != sender:
        raise exception.InvalidSample(
            'sample for host %r published by %r (only %s<host> may publish for <host>)'
            % (named, message.get('publisher_id'), publisher.PUBLISHER_PREFIX),
            ingest.WRONG_SENDER)
    return sample


def refused(error):
    """Log and count one refused sample (an ``exception.InvalidSample``)."""
    LOG.warning('nova-drs collector refused a sample (%s): %s', error.reason, error)
    metrics.SAMPLES_REFUSED.labels(reason=error.reason).inc()


class SampleEndpoint:
    """Batch notification endpoint for ``drs.host.sample`` notifications."""

    filter_rule = messaging.NotificationFilter(event_type=r'^drs\.host\.sample$')

    def __init__(self, collector):
        self.collector = collector

    def info(self, messages):
        try:
            self.collector.receive(messages)
        except Exception as exc:  # the database is down: the samples are lost, not us
            LOG.error('nova-drs collector cannot store %d samples: %s',
                      len(messages), exc)
        return messaging.NotificationResult.HANDLED


class CollectorService(service.Service):
    """oslo.service wrapper: the listener plus the purge timer."""

    def __init__(self, conf, database=None, ratio_lookup=None):
        super().__init__()
        self.conf = conf
        self.collector = Collector(database or db_api.Database.from_conf(conf))
        self.ratio_lookup = ratio_lookup
        self.listener = None
        self.recorder_listener = None

    def start(self):
        super().start()
        group = self.conf.drs_stats
        self.listener = messaging.get_batch_notification_listener(
            publisher.transport(self.conf), [messaging.Target(topic=group.topic)],
            [SampleEndpoint(self.collector)], executor='threading',
            batch_size=group.batch_size, batch_timeout=group.batch_timeout)
        self.listener.start()
        self.tg.add_timer(group.purge_interval, self._purge)
        startup.answer_signals_promptly(self.tg)
        LOG.info('nova-drs collector listening on topic %s', group.topic)
        self._start_recorder()

    def _start_recorder(self):
        """Listen to nova's versioned notifications; say once why it cannot."""
        for problem in notification_problems(self.conf):
            LOG.warning('nova-drs collector: deployed-with ratios are NOT recorded: %s',
                        problem)
        lookup = self.ratio_lookup or nova_ratio_lookup(self.conf)
        if lookup is None:
            return
        topics = self.conf.notifications.versioned_notifications_topics
        self.recorder_listener = messaging.get_notification_listener(
            publisher.transport(self.conf), [messaging.Target(topic=t) for t in topics],
            [recorder.OvercommitRecorder(self.collector.database, lookup)],
            executor='threading', pool=RECORDER_POOL)
        self.recorder_listener.start()
        LOG.info('nova-drs collector recording deployed-with ratios from topics %s',
                 ', '.join(topics))

    def _purge(self):
        try:
            self.collector.purge(self.conf.drs_stats.retention)
        except Exception as exc:
            LOG.error('nova-drs collector purge failed: %s', exc)

    def stop(self, graceful=False):
        """Stop the listeners within half of ``graceful_shutdown_timeout``.

        oslo.messaging's stop waits for the listener's poll, which blocks
        on RabbitMQ up to 5 s when idle: under a shorter grace oslo.service's
        alarm ended the process by SIGALRM. Past the bound the process exits
        anyway; what was consumed but not stored was not acknowledged, so
        RabbitMQ delivers it again to the next collector.
        """
        listeners = [listener for listener in (self.listener, self.recorder_listener)
                     if listener is not None]
        self.listener = self.recorder_listener = None
        stopper = threading.Thread(target=_stop_all, args=(listeners,), daemon=True,
                                   name='collector-stop')
        stopper.start()
        # oslo.service's launcher registers the option; a collector started
        # without one (nova 32's in-process tests) registers it here.
        for group, opts in service.list_opts():
            self.conf.register_opts(opts, group=group)
        grace = self.conf.graceful_shutdown_timeout
        stopper.join(grace / 2.0 if grace else None)
        if stopper.is_alive():
            LOG.warning('nova-drs collector: listeners still stopping after %.1f s; '
                        'exiting (unstored notifications are redelivered)', grace / 2.0)
        super().stop(graceful)


def _stop_all(listeners):
    for listener in listeners:
        listener.stop()
    for listener in listeners:
        listener.wait()
