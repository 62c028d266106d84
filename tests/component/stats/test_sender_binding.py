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

"""Samples bound to their sender (and to sane values), over the real RabbitMQ.

The monitors' publisher and the collector's batch listener talk through
RabbitMQ on loopback (tests/services.py) exactly as in a cloud; the forged
sample is an oslo.messaging notification like any other.
"""

import os
import tempfile
import time
import unittest
import uuid

from oslo_config import cfg
import oslo_messaging as messaging

from nova_drs.conf import stats as stats_conf
from nova_drs.db import api
from nova_drs.db import hosts as db_hosts
from nova_drs.db import migration
from nova_drs.db import statistics as db_statistics
from nova_drs.observability import metrics
from nova_drs.stats import collector
from nova_drs.stats import ingest
from nova_drs.stats import publisher
from tests import services
from tests.unit.stats import test_store


def refused(reason):
    return metrics.REGISTRY.get_sample_value('nova_drs_samples_refused_total',
                                             {'reason': reason}) or 0.0


def stored_hosts(db):
    return {host for host, rows in db_statistics.latest_hosts(db, ['h1', 'h2', 'h3'], 10).items()
            if rows}


class TestSenderBindingOnRabbitMQ(unittest.TestCase):

    def setUp(self):
        services.require('rabbitmq')
        directory = tempfile.mkdtemp(prefix='nova-drs-sender-')
        config_file = os.path.join(directory, 'nova.conf')
        with open(config_file, 'w') as config:
            config.write('[DEFAULT]\ntransport_url = rabbit://guest:guest@%s:%d/\n'
                         % services.SERVICES['rabbitmq'])
        self.conf = cfg.ConfigOpts()
        [(group, opts)] = stats_conf.list_opts()
        self.conf.register_opts(opts, group=group)
        self.conf(['--config-file', config_file], project='nova-drs-test')
        # A topic of this test alone: no other test's samples, none left over.
        self.conf.set_override('topic', 'drs-test-%s' % uuid.uuid4().hex[:8],
                               group='drs_stats')
        self.conf.set_override('batch_timeout', 1, group='drs_stats')
        self.addCleanup(publisher._transports.pop, id(self.conf), None)
        self.db = api.Database('sqlite:///' + os.path.join(directory, 'drs.sqlite'))
        migration.sync(self.db)
        self.addCleanup(self.db.dispose)
        transport = publisher.transport(self.conf)
        self.listener = messaging.get_batch_notification_listener(
            transport, [messaging.Target(topic=self.conf.drs_stats.topic)],
            [collector.SampleEndpoint(collector.Collector(self.db))],
            executor='threading', batch_size=10, batch_timeout=1)
        self.listener.start()
        self.addCleanup(self.listener.wait)
        self.addCleanup(self.listener.stop)

    def publish(self, publisher_id, sample):
        notifier = messaging.Notifier(publisher.transport(self.conf), publisher_id=publisher_id,
                                      driver='messagingv2', topics=[self.conf.drs_stats.topic])
        notifier.info({}, publisher.EVENT_TYPE, sample)

    def wait_for_refusals(self, before, expected, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = {reason: refused(reason) - count for reason, count in before.items()}
            if now == expected:
                return
            time.sleep(0.2)
        self.fail('refusals %s, expected %s' % (now, expected))

    def test_a_forged_sample_is_refused_and_counted(self):
        reasons = (ingest.WRONG_SENDER, ingest.OUT_OF_RANGE, ingest.MALFORMED)
        before = {reason: refused(reason) for reason in reasons}
        h1 = publisher.SamplePublisher(self.conf, 'h1')
        # h1's monitor, rightly, and then forging h2's load and wake MAC.
        h1.publish(test_store.sample('h1', 1))
        h1.publish(test_store.sample('h2', 1, mac='52:54:00:00:00:66'))
        # A publisher that is no nova-drs monitor at all.
        self.publish('nova-compute.h3', test_store.sample('h3', 1))
        self.publish('nova-drs-monitor.', test_store.sample('h3', 2))
        # Its own host, but a load no monitor sends.
        bad = test_store.sample('h1', 2)
        bad['host_stats']['cpu_used_percent'] = 250.0
        h1.publish(bad)
        self.wait_for_refusals(before, {ingest.WRONG_SENDER: 3, ingest.OUT_OF_RANGE: 1,
                                        ingest.MALFORMED: 0})
        self.assertEqual({'h1'}, stored_hosts(self.db))
        [stored] = db_statistics.latest_hosts(self.db, ['h1'], 10)['h1']
        self.assertEqual(10.0 + 1, stored['cpu_used_percent'])
        self.assertIsNone(db_hosts.get(self.db, 'h2'))
