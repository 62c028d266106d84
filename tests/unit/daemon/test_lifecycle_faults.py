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

"""A lifecycle step nova fails for one host leaves that host out, not the cycle.

(On real nova, a 500 to one server's evacuation: tests/functional/test_host_faults.py.)
"""


import pytest

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.daemon import service
from nova_drs.db import hosts as drs_hosts
from nova_drs.loadbalancer import catalog
from tests.unit.daemon import lifecycle_steps


class Nova:
    """nova for hosts entering maintenance with nothing on them."""

    def __init__(self, failing):
        self.failing = failing      # host -> the error compute_service raises

    def compute_service(self, host):
        if host in self.failing:
            raise self.failing[host]
        return {'id': host, 'status': 'enabled', 'state': 'up'}

    def disable_service(self, service_id, reason):
        pass

    def migrations(self, **filters):
        return []

    def servers_on_host(self, host):
        return []

    def hypervisors(self):
        """One compute node per host of these tests, nothing allocated on it."""
        return [{'id': 'rp-%s' % host, 'service': {'host': host}}
                for host in ('h1', 'h2', 'host1')]

    def provider_usages(self, provider_uuid):
        return {}


@pytest.fixture
def database(database):
    """The unit tier's database with h1 and h2 entering maintenance."""
    for host in ('h1', 'h2'):
        lifecycle_steps.in_state(database, host, drs_hosts.ENTERING_MAINTENANCE)
    return database


def balancer(database, failing):
    """A daemon whose lifecycle has what Advance.run hands it from observe."""
    daemon = service.LoadBalancer(drs_conf.CONF, Nova(failing), database,
                                  catalog.by_name('drs'), power_drivers=None)
    lifecycle_steps.observed(daemon.lifecycle)
    return daemon


@pytest.mark.parametrize('error', [exception.NovaUnavailable('GET /os-services: HTTP 500', 500),
                                   exception.NovaRequestFailed('GET /os-services: HTTP 403',
                                                               403)])
def test_an_error_answer_for_one_host_leaves_only_that_host_out(database, error):
    steps, faults = balancer(database, {'h1': error}).advance.lifecycles()
    assert steps == 2
    assert list(faults) == ['h1']
    assert faults['h1'].kind == 'nova_error'
    assert 'HTTP' in str(faults['h1'])
    assert drs_hosts.get(database, 'h1')['suspend_state'] == drs_hosts.ENTERING_MAINTENANCE
    assert drs_hosts.get(database, 'h2')['suspend_state'] == drs_hosts.MAINTENANCE


def test_nova_not_answering_stops_the_cycle(database):
    with pytest.raises(exception.NovaUnavailable):
        balancer(database, {'h1': exception.NovaUnavailable('GET /os-services: timed out'),
                            'h2': exception.NovaUnavailable('GET /os-services: timed out')}
                 ).advance.lifecycles()
