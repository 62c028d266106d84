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

"""nova-drs as deployed: separate processes, MariaDB, RabbitMQ, keystone tokens.

Every request goes through keystone-issued tokens to nova-api under uwsgi
(with nova-drs's paste filter inserted by the devstack plugin); servers are
scheduled by nova-scheduler (with nova-drs's filters/weighers) onto three
nova-compute processes. Run by ``make integration``.
"""


import os
import subprocess
import sys

import pytest

from tests.integration import cloud as minicloud
from tests.integration import scenario

pytestmark = pytest.mark.integration

ACTIVE_TIMEOUT = 90
DRS_STATE_TIMEOUT = 240


def _compute(cloud, **kwargs):
    return cloud.client('compute', default_microversion='2.95', **kwargs)


def _server(compute, server_id):
    return compute.get('/servers/%s' % server_id).json()['server']


def _boot(cloud, compute, name, networks='none'):
    server = compute.post('/servers', json={'server': {
        'name': name, 'imageRef': cloud.image, 'flavorRef': cloud.flavor,
        'networks': networks}}).json()['server']

    def active():
        current = _server(compute, server['id'])
        assert current['status'] != 'ERROR', current.get('fault')
        return current if current['status'] == 'ACTIVE' else None

    return scenario.wait_for('server %s ACTIVE' % name, active, ACTIVE_TIMEOUT)


def _host_of(server):
    return server['OS-EXT-SRV-ATTR:host']


def _allocated_on(cloud, server_id, host):
    """Placement holds the server's allocations on ``host``'s provider only."""
    placement, provider = scenario.placement_view(cloud)
    return scenario.allocations_of(placement, server_id) == {provider.get(host)}


def _require_daemon(cloud):
    if cloud.daemon_error:
        pytest.fail('nova-loadbalancer (nova_drs/cmd/loadbalancer.py) is not running, so '
                    'nothing acts on DRS host states: %s' % cloud.daemon_error, pytrace=False)


def test_admin_lists_three_hypervisors(cloud):
    hypervisors = _compute(cloud, raise_exc=True).get('/os-hypervisors').json()['hypervisors']

    assert sorted(h['hypervisor_hostname'] for h in hypervisors) == list(minicloud.COMPUTES)
    assert {h['state'] for h in hypervisors} == {'up'}


def _port_hosts(cloud, server_id):
    network = cloud.client('network', raise_exc=True)
    ports = network.get('/v2.0/ports?device_id=%s' % server_id).json()['ports']
    return [port['binding:host_id'] for port in ports]


def test_boot_and_live_migrate_with_allocations_following(cloud):
    """A boot without a network named (``networks: auto``, what
    ``openstack server create`` sends without ``--nic``) gets a port on the
    one shared network; allocations and the port's binding follow the move."""
    compute = _compute(cloud, raise_exc=True)
    server = _boot(cloud, compute, 'migrant', networks='auto')
    source = _host_of(server)
    assert list(server['addresses']) == ['private'], server['addresses']
    assert _port_hosts(cloud, server['id']) == [source]
    assert _allocated_on(cloud, server['id'], source)

    compute.post('/servers/%s/action' % server['id'], json={
        'os-migrateLive': {'host': None, 'block_migration': 'auto'}})

    def moved():
        current = _server(compute, server['id'])
        assert current['status'] != 'ERROR', current.get('fault')
        return current if current['status'] == 'ACTIVE' and _host_of(current) != source \
            else None

    moved_server = scenario.wait_for('live migration away from %s' % source, moved,
                                     ACTIVE_TIMEOUT)
    target = _host_of(moved_server)
    assert target in minicloud.COMPUTES
    scenario.wait_for('allocations of the server on %s only' % target,
          lambda: _allocated_on(cloud, server['id'], target),
          30)
    assert _port_hosts(cloud, server['id']) == [target]
    compute.delete('/servers/%s' % server['id'])
    scenario.wait_for('the port deleted with its server',
                      lambda: _port_hosts(cloud, server['id']) == [], 30)


def test_loadbalancer_api_lists_the_three_hosts(cloud):
    response = _compute(cloud, raise_exc=False).get('/loadbalancer')

    assert response.status_code == 200, response.text
    hosts = response.json()['hosts']
    assert sorted(host['host'] for host in hosts) == list(minicloud.COMPUTES)
    assert {host['suspend_state'] for host in hosts} == {'active'}


def test_non_admin_gets_403_from_the_loadbalancer_api(cloud):
    demo = _compute(cloud, user='demo', project='demo', raise_exc=False)

    assert demo.get('/loadbalancer').status_code == 403
    response = demo.post('/loadbalancer/action',
                         json={'suspend_host': {'host': minicloud.COMPUTES[0]}})
    assert response.status_code == 403, response.text


def _drs_state(compute, host):
    response = compute.get('/loadbalancer/%s' % host)
    assert response.status_code == 200, response.text
    return response.json()['host']


def _wait_drs_state(compute, host, wanted):
    def reached():
        state = _drs_state(compute, host)
        assert state['suspend_state'] != 'error', 'host %s went to error: %s' % (
            host, state['state_reason'])
        return state if state['suspend_state'] == wanted else None

    return scenario.wait_for('host %s %s' % (host, wanted), reached, DRS_STATE_TIMEOUT)


SUSPENDED = {}


def test_suspend_host_moves_servers_and_powers_the_host_off(cloud):
    _require_daemon(cloud)
    compute = _compute(cloud, raise_exc=False)
    server = _boot(cloud, compute, 'evacuee')
    host = _host_of(server)
    # The shipped ipmi driver, against the host's virtual BMC (tests/integration/bmc.py).
    response = compute.post('/loadbalancer/action', json={'set_power': {
        'host': host, 'driver': 'ipmi', 'mode': 'off',
        'options': cloud.bmc_options(host, 'ipmi')}})
    assert response.status_code == 200, response.text

    response = compute.post('/loadbalancer/action', json={'suspend_host': {'host': host}})
    assert response.status_code == 202, response.text
    _wait_drs_state(compute, host, 'suspended')
    SUSPENDED['host'] = host

    current = _server(compute, server['id'])
    assert current['status'] == 'ACTIVE'
    assert _host_of(current) != host
    services = compute.get('/os-services?binary=nova-compute&host=%s' % host).json()
    assert services['services'][0]['status'] == 'disabled'
    assert 'nova-compute-' + host in cloud.failed(), 'the host process still runs'
    assert cloud.power_status('ipmi', host) == 'off'

    # A new boot never lands on the suspended host.
    newcomer = _boot(cloud, compute, 'newcomer')
    assert _host_of(newcomer) != host


def test_unsuspend_host_wakes_it(cloud):
    _require_daemon(cloud)
    if 'host' not in SUSPENDED:
        pytest.fail('no host was suspended by the previous test', pytrace=False)
    host = SUSPENDED['host']
    compute = _compute(cloud, raise_exc=False)

    response = compute.post('/loadbalancer/action', json={'unsuspend_host': {'host': host}})
    assert response.status_code == 202, response.text
    _wait_drs_state(compute, host, 'active')

    services = compute.get('/os-services?binary=nova-compute&host=%s' % host).json()
    assert services['services'][0]['state'] == 'up'
    assert services['services'][0]['status'] == 'enabled'
    assert cloud.power_status('ipmi', host) == 'on'


def test_an_operator_uses_the_running_cloud_as_it_is(cloud):
    """``tools/minicloud up`` on the running cloud keeps it (no process
    restarted) and prints how to reach it; its openrc and clouds.yaml work
    with the CLIs; both nova-drs processes serve Prometheus metrics."""
    if os.environ.get('NOVA_DRS_CLOUD_REUSE') == '1':
        pytest.skip('a reused cloud may predate the credentials files')
    before = cloud.running()
    result = subprocess.run([os.path.join(minicloud.ROOT, 'tools', 'minicloud'), 'up'],
                            capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHON=sys.executable))
    assert result.returncode == 0, result.stderr
    assert 'already up, kept' in result.stdout, result.stdout
    assert cloud.running() == before
    openrc = os.path.join(cloud.workdir, 'openrc')
    assert oct(os.stat(openrc).st_mode & 0o777) == '0o600'
    listed = subprocess.run(
        ['bash', '-c', '. %s && exec %s drs host list -f value -c host'
         % (openrc, os.path.join(minicloud.BIN, 'openstack'))],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith('OS_')})
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == list(minicloud.COMPUTES)
    by_cloud = subprocess.run(
        [os.path.join(minicloud.BIN, 'openstack'), '--os-cloud', 'minicloud',
         'hypervisor', 'list', '-f', 'value', '-c', 'Hypervisor Hostname'],
        capture_output=True, text=True, timeout=120,
        env={**{k: v for k, v in os.environ.items() if not k.startswith('OS_')},
             'OS_CLIENT_CONFIG_FILE': os.path.join(cloud.workdir, 'clouds.yaml')})
    assert by_cloud.returncode == 0, by_cloud.stderr
    assert len(by_cloud.stdout.split()) >= len(minicloud.COMPUTES)
    for name in ('metrics-loadbalancer', 'metrics-collector'):
        url = 'http://127.0.0.1:%d/metrics' % cloud.ports[name]
        assert url in result.stdout
        body = scenario.wait_for('%s serving' % url, lambda url=url: _metrics(url), 30, 1)
        assert 'nova_drs_' in body, body[:500]


def _metrics(url):
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return None
