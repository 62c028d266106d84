"""Test-side pieces for driving the daemon against the in-process cloud."""

from keystoneauth1 import adapter
from keystoneauth1 import session as ks_session

from nova_drs.daemon import nova_api


def nova_api_for(testcase):
    """NovaAPI talking to the fixture's real nova-api and placement over REST."""
    admin = testcase.admin_api
    compute = adapter.Adapter(
        ks_session.Session(auth=None), service_type='compute',
        endpoint_override=admin.base_url,
        additional_headers={'X-Auth-User': 'admin', 'X-User-Id': 'admin',
                            'X-Auth-Project-Id': admin.project_id,
                            'X-Roles': 'reader,member,admin'})
    placement = adapter.Adapter(
        ks_session.Session(auth=None), service_type='placement',
        endpoint_override=testcase.placement_fixture.endpoint,
        additional_headers={'x-auth-token': testcase.placement_fixture.token})
    return nova_api.NovaAPI(compute, placement)


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

    def __call__(self, record):
        return self, record['host']

    def _service_id(self, host):
        return self.testcase.admin_api.get_services(
            binary='nova-compute', host=host)[0]['id']

    def suspend(self, host):
        self.calls.append(('suspend', host))
        self.testcase.computes[host].stop()
        self.testcase.admin_api.put_service_force_down(self._service_id(host), True)
        self.off.add(host)

    def wake(self, host):
        self.calls.append(('wake', host))

    def come_back(self, host):
        """The test plays the host finishing its boot."""
        compute = self.testcase.computes[host]
        self.testcase.computes[host] = self.testcase.restart_compute_service(compute)
        self.testcase.admin_api.put_service_force_down(self._service_id(host), False)
        self.off.discard(host)

    def status(self, host):
        return 'off' if host in self.off else 'on'
