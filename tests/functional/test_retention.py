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

"""The daemon's purge on real nova: records of computes an operator removed."""

import datetime

from nova_drs.db import hosts as drs_hosts
from tests.functional import test_daemon_cycle


class TestRemovedComputes(test_daemon_cycle.DaemonTestBase):
    CLUSTER_METADATA = {'drs_policy': 'power_saving', 'min_active_hosts': '1'}
    EXTRA_FLAGS = {**test_daemon_cycle.DaemonTestBase.EXTRA_FLAGS,
                   ('drs_retention', 'removed_host_grace'): '1'}

    def _remove_compute(self, host):
        """What an operator does: stop nova-compute, delete its service record."""
        self.computes[host].stop()
        service = self.admin_api.get_services(binary='nova-compute', host=host)[0]
        self.admin_api.put_service_force_down(service['id'], True)
        self.admin_api.api_delete('/os-services/%s' % service['id'])
        self.assertEqual([], self.admin_api.get_services(binary='nova-compute', host=host))

    def test_active_removed_host_goes_after_the_grace_a_sleeping_one_stays(self):
        self.cycle()  # the daemon registers host1..3
        # host1 sleeps (the daemon suspended it), then the operator deletes the
        # compute service of host1 and of the active host3.
        drs_hosts.transition(self.drs_db, 'host1', drs_hosts.ACTIVE, drs_hosts.SUSPENDING, 't')
        drs_hosts.transition(self.drs_db, 'host1', drs_hosts.SUSPENDING,
                             drs_hosts.SUSPENDED, 't')
        self._remove_compute('host1')
        self._remove_compute('host3')

        self.cycle()
        self.assertEqual({'host1', 'host2', 'host3'},
                         set(drs_hosts.states(self.drs_db)))  # within the grace
        purge = self.balancer.history_purge
        self.assertEqual({'host1', 'host3'}, set(purge.removed.missing_since))

        # The grace (1 h) has passed for both; the purge is due again.
        for host in purge.removed.missing_since:
            purge.removed.missing_since[host] -= datetime.timedelta(hours=2)
        purge.next_at = None
        self.cycle()
        self.assertEqual({'host1': drs_hosts.SUSPENDED, 'host2': drs_hosts.ACTIVE},
                         drs_hosts.states(self.drs_db))
