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

"""Hosts nobody opted into DRS are left alone, by the daemon as by the weighers."""

from nova_drs.db import hosts as drs_hosts
from tests.functional import daemon_support
from tests.functional import test_daemon_cycle


class NotOptedIn(test_daemon_cycle.DaemonTestBase):
    """Three hosts in no drs_policy aggregate; host1 overloaded (12 busy vCPUs
    on 10), host3 idle."""

    # An aggregate without drs_policy does not opt its hosts in.
    AGGREGATE = 'rack1'
    CLUSTER_METADATA = None

    def setUp(self):
        super().setUp()
        flavor = self.admin_api.post_flavor(
            {'flavor': {'name': 'big', 'vcpus': 4, 'ram': 512, 'disk': 1}})
        self.servers = [self._create_server(name='s%d' % i, host=host, networks='none',
                                            flavor_id=flavor['id'])
                        for i, host in enumerate(('host1', 'host1', 'host1', 'host2'))]
        self.where = {s['id']: self.server_host(s['id']) for s in self.servers}
        load = {uuid: (host, 100.0) for uuid, host in self.where.items()}
        daemon_support.record_load(self.drs_db, {'host1': 100.0, 'host2': 50.0,
                                                 'host3': 1.0}, load)


class TestDefaultPolicyNone(NotOptedIn):

    def test_no_migration_no_suspend(self):
        for _ in range(2):
            summary = self.cycle()
            self.assertEqual([], summary['actions'])
        self.assertEqual(self.where, {s['id']: self.server_host(s['id'])
                                      for s in self.servers})
        self.assertEqual({'host1': 'active', 'host2': 'active', 'host3': 'active'},
                         drs_hosts.states(self.drs_db))
        self.assertEqual([], self.power.calls)


class TestDefaultPolicyPowerSaving(NotOptedIn):
    """The one option opts every such host in (the old [drs_scheduler] name is
    covered by tests/unit/test_cluster_policy.py)."""

    EXTRA_FLAGS = {**NotOptedIn.EXTRA_FLAGS,
                   ('loadbalancer', 'default_policy'): 'power_saving'}

    def test_default_policy_opts_hosts_in(self):
        summary = self.cycle()
        kinds = {(a.kind, a.source or a.host) for a in summary['actions']}
        self.assertIn(('migrate', 'host1'), kinds, summary)


class TestInvalidPolicy(NotOptedIn):
    """An invalid drs_policy opts nobody in: one warning, hosts left alone."""

    def test_invalid_policy_warns_once_and_leaves_hosts_alone(self):
        aggregate = self.admin_api.api_get('/os-aggregates').body['aggregates'][0]
        self.admin_api.post_aggregate_action(aggregate['id'], {'set_metadata': {
            'metadata': {'drs_policy': 'chaos'}}})
        for _ in range(2):
            self.assertEqual([], self.cycle()['actions'])
        log = self.stdlog.logger.output
        self.assertEqual(1, log.count("ignoring invalid metadata drs_policy='chaos'"))
