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

"""Test-side pieces for driving the daemon against the in-process cloud."""

import datetime
import time

from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session
from openstack import connection
from openstack.placement.v1 import _proxy as placement_proxy

from nova_drs.clients import nova_api
from nova_drs.daemon import cloud_view
from nova_drs.daemon import lifecycle
from nova_drs.stats import ingest


def settle(nova, timeout=20):
    """Waits, ``timeout`` seconds at the most, until no server has a task state
    (live migrations run in nova's background threads); the servers still busy
    then, none once all settled."""
    deadline = time.monotonic() + timeout
    while True:
        busy = [s for s in nova.all_servers() if s.get('OS-EXT-STS:task_state')]
        if not busy or time.monotonic() >= deadline:
            return busy
        time.sleep(0.1)


def nova_api_for(testcase):
    """NovaAPI talking to the fixture's real nova-api and placement over REST.

    One session carries both fixtures' stand-in credentials: nova's reads the
    X-Auth-* headers, placement's the token.
    """
    admin = testcase.admin_api
    session = ks_session.Session(auth=noauth.NoAuth(), additional_headers={
        'X-Auth-User': 'admin', 'X-User-Id': 'admin',
        'X-Auth-Project-Id': admin.project_id, 'X-Roles': 'reader,member,admin',
        'x-auth-token': testcase.placement_fixture.token})
    cloud = connection.Connection(
        session=session, compute_endpoint_override=admin.base_url,
        placement_endpoint_override=testcase.placement_fixture.endpoint)
    # nova's test base (OpenStackSDKFixture) makes every SDK placement proxy a
    # bare passthrough; the daemon's and the sync's is the SDK's real v1 proxy.
    placement = cloud.config.get_session_client('placement', constructor=placement_proxy.Proxy)
    placement._connection = cloud      # what the SDK's own proxy factory sets
    cloud._proxies['placement'] = placement
    return nova_api.NovaAPI(cloud)


def host_lifecycle(testcase, **kwargs):
    """The daemon's HostLifecycle on the test's cloud, 300 s timeouts unless
    given, with what Advance.run hands it from the cycle's observe: the compute
    nodes nova lists (they stay the same through a test: a restarted compute
    keeps its node)."""
    timeouts = dict(suspend_timeout=300, wake_timeout=300, migration_timeout=300)
    steps = lifecycle.HostLifecycle(testcase.nova, testcase.drs_db, testcase.power,
                                    **dict(timeouts, **kwargs))
    steps.compute_nodes = cloud_view.compute_nodes_by_host(testcase.nova.hypervisors())
    return steps


class PowerTarget:
    def __init__(self, name):
        self.name = name
        self.options = {}


class InProcessHostPower:
    """Power driver for tests: a "host" is an in-process nova-compute service.

    Suspend stops the service and marks it forced down (what nova sees when a
    host sleeps); wake restarts it. Test-only: production drivers live in
    nova_drs.power.
    """

    def __init__(self, testcase):
        self.testcase = testcase
        self.calls = []
        self.off = set()
        self.waking = set()

    def __call__(self, record):
        return self, PowerTarget(record['host'])

    def _service_id(self, host):
        return self.testcase.admin_api.get_services(
            binary='nova-compute', host=host)[0]['id']

    def suspend(self, target):
        host = target.name
        self.calls.append(('suspend', host))
        self.testcase.computes[host].stop()
        self.testcase.admin_api.put_service_force_down(self._service_id(host), True)
        self.off.add(host)

    def wake(self, target):
        host = target.name
        self.calls.append(('wake', host))
        if host in self.off:
            self.waking.add(host)

    def come_back(self, host):
        """The test plays the host finishing its boot."""
        compute = self.testcase.computes[host]
        self.testcase.computes[host] = self.testcase.restart_compute_service(compute)
        self.testcase.admin_api.put_service_force_down(self._service_id(host), False)
        self.off.discard(host)
        self.waking.discard(host)

    @staticmethod
    def can_suspend(options):
        return True

    can_wake = can_suspend

    def status(self, target):
        return 'off' if target.name in self.off else 'on'


def record_load(database, host_load, instance_load, samples=12, period=60):
    """Play the statistics collector: ``samples`` fresh samples per host/instance.

    host_load: {host: cpu percent}; instance_load: {uuid: (host, cpu percent)}.
    """
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    batch = []
    for age in range(samples):
        sampled_at = (now - datetime.timedelta(seconds=age * period)).isoformat()
        for host, percent in host_load.items():
            batch.append({
                'host': host, 'sampled_at': sampled_at,
                'host_stats': {'cpu_used_percent': percent, 'memory_total': 8192,
                               'memory_used': 1024, 'vcpus': 10},
                'instances': [{'instance_uuid': uuid, 'cpu_used_percent': load, 'vcpus': 1,
                               'mem': 512}
                              for uuid, (where, load) in instance_load.items()
                              if where == host]})
    ingest.insert_samples(database, batch)
