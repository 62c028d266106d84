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

"""Deployed-with ratios recorded as deployed: nova-drs-collector's recorder listener.

nova's functional fixture captures nova's versioned notifications instead of
sending them; the test forwards each one, unchanged, over the collector's
oslo.messaging transport on nova's topic, as nova does with
``[oslo_messaging_notifications] driver = messagingv2``. Nothing hands the
recorder anything directly.
"""

import time

import oslo_messaging as messaging

from nova_drs import conf as drs_conf
from nova_drs.db import overcommit as db_overcommit
from nova_drs.overcommit import alerts
from nova_drs.overcommit import nova_view
from nova_drs.stats import collector
from nova_drs.stats import publisher
from tests.functional import test_scheduler_overcommit


class CollectorRecordsTest(test_scheduler_overcommit.OvercommitTestBase):
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'      # 10 vCPUs
    COMPUTE_HOSTS = ('host1',)

    def setUp(self):
        publisher._transports.clear()
        super().setUp()
        self.service = collector.CollectorService(
            drs_conf.CONF, self.drs_db, ratio_lookup=nova_view.RatioLookup(drs_conf.CONF))
        self.service.start()
        self.addCleanup(self.service.stop)
        self.nova_notifier = messaging.Notifier(
            publisher.transport(drs_conf.CONF), driver='messagingv2',
            topics=drs_conf.CONF.notifications.versioned_notifications_topics)

    def feed_notifications(self):
        """Send what nova emitted since last time, as nova would, on nova's topic."""
        emitted = list(self.notifier.versioned_notifications)
        for notification in emitted[self._fed:]:
            self.nova_notifier.prepare(publisher_id=notification['publisher_id']).info(
                {}, notification['event_type'], notification['payload'])
        self._fed = len(emitted)

    def boot(self):
        server = super().boot()  # waits for create.end, then sends it
        if server['status'] == 'ACTIVE':
            self.wait_until(lambda: db_overcommit.get(self.drs_db, server['id']),
                            'the collector to record %s' % server['id'])
        return server

    def test_seed_example_ratio_raised_then_lowered(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.sync()
        first = [self.boot() for _ in range(5)]
        self.assertEqual(['ACTIVE'] * 5, [s['status'] for s in first])
        self.assertEqual([1.0] * 5,
                         [db_overcommit.get(self.drs_db, s['id'])['cpu_allocation_ratio']
                          for s in first])

        # 1.0 -> 2.0 and the README's sync step: the 5 keep their 1.0, so
        # 10 x 2 - 5 x 2 = exactly 10 more fit (naive accounting: 15).
        self.set_metadata(agg_id, cpu_allocation_ratio='2.0')
        self.sync()
        self.assertEqual({'host1': 10}, self.boot_until_full(limit=20))

        # 2.0 -> 1.0: nothing fits and the >100 % alert is raised.
        self.reset_notifications()
        self.set_metadata(agg_id, cpu_allocation_ratio='1.0')
        self.assertEqual('ERROR', self.boot()['status'])
        exceeded = [n for n in self.notifier.notifications if n.event_type == alerts.EVENT_TYPE]
        self.assertEqual(1, len(exceeded))
        self.assertEqual(('host1', 'vcpus'),
                         tuple(exceeded[0].payload[k] for k in ('host', 'resource')))
        self.assertGreater(exceeded[0].payload['percent'], 100.0)


class NotificationsOffTest(test_scheduler_overcommit.OvercommitTestBase):
    COMPUTE_HOSTS = ('host1',)
    EXTRA_FLAGS = {**test_scheduler_overcommit.OvercommitTestBase.EXTRA_FLAGS,
                   ('notifications', 'notification_format'): 'unversioned'}

    def test_collector_says_so_once_at_startup(self):
        service = collector.CollectorService(
            drs_conf.CONF, self.drs_db, ratio_lookup=nova_view.RatioLookup(drs_conf.CONF))
        service.start()
        self.addCleanup(service.stop)
        log = self.stdlog.logger.output
        self.assertEqual(1, log.count('deployed-with ratios are NOT recorded: '
                                      '[notifications] notification_format = unversioned'))


class SyncRecordsAtLaunchRatiosTest(test_scheduler_overcommit.OvercommitTestBase):
    """No collector: ``overcommit sync`` alone, as the README's step, records
    the 5 servers at the ratio in force when they launched (ratio history)."""

    COMPUTE_DRIVER = 'fake.MediumFakeDriver'      # 10 vCPUs
    COMPUTE_HOSTS = ('host1',)

    def feed_notifications(self):
        """Nothing listens to nova's notifications in this test."""

    def test_ratio_raised_after_boots_then_sync(self):
        agg_id = self.aggregate('A', ['host1'], cpu_allocation_ratio='1.0')
        self.sync()
        first = [self.boot() for _ in range(5)]
        self.assertEqual(['ACTIVE'] * 5, [s['status'] for s in first])
        self.assertIsNone(db_overcommit.get(self.drs_db, first[0]['id']))

        time.sleep(1.1)  # the history has a one-second resolution, as nova's launched_at
        self.set_metadata(agg_id, cpu_allocation_ratio='2.0')
        self.sync()
        self.assertEqual([1.0] * 5,
                         [db_overcommit.get(self.drs_db, s['id'])['cpu_allocation_ratio']
                          for s in first])
        self.assertEqual({'host1': 10}, self.boot_until_full(limit=20))
