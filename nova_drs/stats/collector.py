"""``nova-drs-collector``: stores published samples, purges old ones.

A batch notification listener on ``[drs_stats] topic`` hands up to
``batch_size`` samples at a time to one bulk insert; the MAC address a host
reports (wake_address plugin) goes into its ``drs_hosts`` record. A timer
purges samples older than ``retention``.
"""

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_service import service

from nova_drs.db import api as db_api
from nova_drs.db import hosts as db_hosts
from nova_drs.stats import publisher
from nova_drs.stats import store

LOG = logging.getLogger(__name__)


class Collector:
    """Turns batches of samples into database rows."""

    def __init__(self, database):
        self.database = database
        self._known_macs = {}

    def ingest(self, samples):
        hosts, instances, errors = store.insert_samples(self.database, samples)
        for error in errors:
            LOG.warning('nova-drs collector dropped an invalid sample: %s', error)
        self._store_wake_addresses(samples)
        return hosts, instances

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
        hosts, instances = store.purge_older_than(self.database, retention)
        if hosts or instances:
            LOG.info('nova-drs collector purged %d host and %d instance samples older '
                     'than %d s', hosts, instances, retention)
        return hosts, instances


class SampleEndpoint:
    """Batch notification endpoint for ``drs.host.sample`` notifications."""

    filter_rule = messaging.NotificationFilter(event_type=r'^drs\.host\.sample$')

    def __init__(self, collector):
        self.collector = collector

    def info(self, messages):
        try:
            self.collector.ingest([message['payload'] for message in messages])
        except Exception as exc:  # the database is down: the samples are lost, not us
            LOG.error('nova-drs collector cannot store %d samples: %s',
                      len(messages), exc)
        return messaging.NotificationResult.HANDLED


class CollectorService(service.Service):
    """oslo.service wrapper: the listener plus the purge timer."""

    def __init__(self, conf, database=None):
        super().__init__()
        self.conf = conf
        self.collector = Collector(database or db_api.Database.from_conf(conf))
        self.listener = None

    def start(self):
        super().start()
        group = self.conf.drs_stats
        self.listener = messaging.get_batch_notification_listener(
            publisher.transport(self.conf), [messaging.Target(topic=group.topic)],
            [SampleEndpoint(self.collector)], executor='threading',
            batch_size=group.batch_size, batch_timeout=group.batch_timeout)
        self.listener.start()
        self.tg.add_timer(group.purge_interval, self._purge)
        LOG.info('nova-drs collector listening on topic %s', group.topic)

    def _purge(self):
        try:
            self.collector.purge(self.conf.drs_stats.retention)
        except Exception as exc:
            LOG.error('nova-drs collector purge failed: %s', exc)

    def stop(self, graceful=False):
        if self.listener is not None:
            self.listener.stop()
            self.listener.wait()
            self.listener = None
        super().stop(graceful)
