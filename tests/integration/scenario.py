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

"""Shared steps of the daemon-driven mini-cloud scenarios and their common end.

Every scenario ends with :func:`check_invariants`: nothing lost, DRS and
nova agree. ``STATE`` carries what one scenario leaves for the next (one
cloud; test_daemon.py runs before test_daemon_failures.py, see conftest.py).
"""

import datetime
import json
import os
import time

import pytest

from tests.integration import cloud as minicloud

SERVERS_PER_HOST = 3
#: How long a scenario step may take on an idle machine. A step's deadline
#: only bounds a hang (what a test checks is the state reached, and a bound
#: of the product's own is asserted on its own measure, as SIGTERM to exit
#: is): wait_for allows PATIENCE times each deadline, because `make test`
#: runs four lanes on two cores, and a clean-clone CI run measured the
#: mini-cloud's steps up to 12x slower than on an idle machine (keystone
#: 87.7 s against 8.6 s, nova's db syncs 129 s against 10.5 s), one
#: evacuation past 240 s.
SCENARIO_TIMEOUT = 240
PATIENCE = 3
STATE = {}

def compute_client(cloud):
    return cloud.client('compute', default_microversion='2.95', raise_exc=False)


def wait_for(what, probe, timeout=SCENARIO_TIMEOUT, interval=2):
    """``probe()``'s first true value, asked every ``interval`` seconds;
    pytest fails after PATIENCE x ``timeout`` seconds."""
    timeout *= PATIENCE
    start = time.monotonic()
    deadline = start + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            print('  %5.1f s  %s' % (time.monotonic() - start, what), flush=True)
            return last
        time.sleep(interval)
    pytest.fail('%s: not reached within %ds (last seen: %r)' % (what, timeout, last),
                pytrace=False)


def ok(response, status=200):
    assert response.status_code == status, '%s %s: %s' % (
        response.request.method, response.request.url, response.text[-2000:])
    return response.json() if response.content else None


def list_servers(compute, name='^drs-load'):
    query = '&name=%s' % name if name else ''
    return ok(compute.get('/servers/detail?all_tenants=1' + query))['servers']


def drs_hosts(compute):
    return {h['host']: h for h in ok(compute.get('/loadbalancer'))['hosts']}


def compute_services(compute):
    return {s['host']: s for s in ok(compute.get('/os-services?binary=nova-compute'))
            ['services']}


def placement_view(cloud):
    """(placement client at 1.28, {host: its resource provider}): one session
    and one listing for a whole consistency check, whatever the servers."""
    placement = cloud.client('placement', raise_exc=True, default_microversion='1.28')
    providers = placement.get('/resource_providers').json()['resource_providers']
    return placement, {provider['name']: provider['uuid'] for provider in providers}


def allocations_of(placement, server_id):
    return set(placement.get('/allocations/%s' % server_id).json()['allocations'])


def migrations_of(compute, server_id):
    return ok(compute.get('/os-migrations?instance_uuid=%s' % server_id))['migrations']


def nova_now():
    """Now, floored to the second: nova's ``created_at`` in MariaDB has no
    fraction, so a migration made within this second would otherwise look older."""
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def utc(text):
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc)


def check_invariants(cloud, compute, timeout=45):
    """``cloud_consistent`` holds, at the latest once nova noticed the last power
    change (a powered-off compute stays "up" for ``service_down_time``);
    PATIENCE x ``timeout`` seconds, as wait_for allows."""
    deadline = time.monotonic() + timeout * PATIENCE
    while True:
        try:
            return cloud_consistent(cloud, compute)
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(3)


def cloud_consistent(cloud, compute, expected_status='ACTIVE'):
    """The shared end of every scenario: nothing lost, DRS and nova agree.

    Every server (of every test) ACTIVE on a host that is active in DRS, up,
    enabled and powered on, with placement allocations on that host only; no
    suspended host with servers; each host's DRS state matches its
    nova-compute service, its process and what its BMC reports.
    """
    drs = drs_hosts(compute)
    services = compute_services(compute)
    servers = list_servers(compute, name=None)
    placement, provider = placement_view(cloud)
    on_host = {}
    for server in servers:
        host = server['OS-EXT-SRV-ATTR:host']
        on_host.setdefault(host, []).append(server['id'])
        assert server['status'] == expected_status, server
        assert drs[host]['suspend_state'] == 'active', (host, drs[host])
        assert allocations_of(placement, server['id']) == {provider.get(host)}, server['id']
    for host, record in drs.items():
        state, service = record['suspend_state'], services[host]
        assert state in ('active', 'suspended', 'error'), (host, record)
        alive = 'nova-compute-' + host not in cloud.failed()
        if state == 'error':
            # Left for an admin (BMC silent, or never came back): empty.
            assert not on_host.get(host), (host, record)
            continue
        if state == 'suspended':
            assert not on_host.get(host), 'suspended host %s has servers' % host
            assert (service['state'], service['status'], alive) == ('down', 'disabled', False)
        else:
            assert (service['state'], service['status'], alive) == ('up', 'enabled', True), \
                (host, service)
        if record.get('power_driver') in ('ipmi', 'redfish'):
            power = cloud.power_status(record['power_driver'], host)
            assert power == ('off' if state == 'suspended' else 'on'), (host, power)


def figures(cloud, **values):
    path = os.path.join(cloud.workdir, 'figures.json')
    known = {}
    if os.path.exists(path):
        with open(path) as handle:
            known = json.load(handle)
    known.update(values)
    with open(path, 'w') as handle:
        json.dump(known, handle, indent=2)
    print('figures: %s' % json.dumps(values))


def pinned_flavor(compute):
    """A flavor whose servers nova-drs never moves (``drs:automation=disabled``)."""
    name = 'drs.tiny.pinned'
    found = [f for f in ok(compute.get('/flavors'))['flavors'] if f['name'] == name]
    if found:
        return found[0]['id']
    flavor = ok(compute.post('/flavors', json={'flavor': {
        'name': name, 'ram': 128, 'vcpus': 1, 'disk': 1}}))['flavor']['id']
    ok(compute.post('/flavors/%s/os-extra_specs' % flavor, json={
        'extra_specs': {'drs:automation': 'disabled'}}))
    return flavor


def boot_spread(cloud, compute, prefix='drs-load', per_host=SERVERS_PER_HOST,
                hosts=minicloud.COMPUTES, flavor=None):
    """``per_host`` idle servers on each host (admin host placement, 2.74)."""
    # The earlier tiers' servers count against the admin project's quota.
    ok(compute.put('/os-quota-sets/%s' % cloud.session().get_project_id(), json={
        'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}}))
    ids = []
    for host in hosts:
        for index in range(per_host):
            ids.append(ok(compute.post('/servers', json={'server': {
                'name': '%s-%s-%d' % (prefix, host, index), 'imageRef': cloud.image,
                'flavorRef': flavor or cloud.flavor, 'networks': 'none', 'host': host}}),
                202)
                ['server']['id'])

    def all_active():
        servers = list_servers(compute, '^' + prefix)
        for server in servers:
            assert server['status'] != 'ERROR', server.get('fault')
        return len(servers) == len(ids) and all(s['status'] == 'ACTIVE' for s in servers)

    wait_for('%d servers ACTIVE' % len(ids), all_active, 120)
    return ids


def opt_in(compute, automation='automatic', hosts=minicloud.COMPUTES, **metadata):
    """Put ``hosts`` in a power_saving DRS cluster, as an operator would:
    hosts outside every drs_policy aggregate are left alone (default_policy none).
    ``automation``: the cluster's ``drs_automation``; ``metadata``: more keys
    of the cluster's aggregate (e.g. ``high_utilization``)."""
    name = 'drs-cluster'
    found = [a for a in ok(compute.get('/os-aggregates'))['aggregates'] if a['name'] == name]
    aggregate = found[0] if found else ok(compute.post('/os-aggregates', json={
        'aggregate': {'name': name}}))['aggregate']
    for host in hosts:
        if host not in (aggregate.get('hosts') or ()):
            aggregate = ok(compute.post('/os-aggregates/%s/action' % aggregate['id'], json={
                'add_host': {'host': host}}))['aggregate']
    metadata.update(drs_policy='power_saving', drs_automation=automation)
    ok(compute.post('/os-aggregates/%s/action' % aggregate['id'], json={
        'set_metadata': {'metadata': metadata}}))


def require_daemon(cloud):
    if cloud.daemon_error:
        pytest.fail('nova-loadbalancer is not running: %s' % cloud.daemon_error,
                    pytrace=False)


def admin_action(compute, action, host, allowed=(202,)):
    response = compute.post('/loadbalancer/action', json={action: {'host': host}})
    assert response.status_code in allowed, response.text
    return response.status_code


def set_power(cloud, compute, host, driver):
    """Give ``host`` the shipped ``driver`` towards its virtual BMC."""
    ok(compute.post('/loadbalancer/action', json={'set_power': {
        'host': host, 'driver': driver, 'mode': 'off',
        'options': cloud.bmc_options(host, driver)}}))


def state_of(compute, host):
    return drs_hosts(compute)[host]['suspend_state']
