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

"""An operator's day on the mini-cloud, through the CLIs only.

One scenario, each step an ``openstack`` (or ``nova``) command whose output
is asserted, in the order an operator meets them: the energy report of a
fresh cloud, power settings with an IPMI port, servers booted without
``--nic``, explain by server name, a manual plan approved by the id just
read, maintenance of the last active host finishing by waking a suspended
one, the exit from maintenance returning once nova-compute is enabled.
It starts and ends with no server and no DRS cluster, so the daemon
scenarios after it (test_daemon.py) find the cloud as they expect.
"""

import json
import os
import subprocess
import time

import pytest

from tests.integration import cloud as minicloud
from tests.integration import scenario

pytestmark = pytest.mark.integration

PREFIX = 'walk-'
# The default [drs_metrics] power_curve draws at most 250 W per host.
MAX_HOST_KW = 0.250


def _cli(cloud, *args, binary='openstack', check=True):
    """(stdout, stderr) of a CLI of the cloud's venv, as an operator runs it
    after ``source state/minicloud/openrc``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env.update(OS_AUTH_URL=cloud.auth_url, OS_USERNAME='admin', OS_PASSWORD=minicloud.PASSWORD,
               OS_PROJECT_NAME='admin', OS_USER_DOMAIN_NAME='Default',
               OS_PROJECT_DOMAIN_NAME='Default', OS_REGION_NAME=minicloud.REGION,
               OS_IDENTITY_API_VERSION='3')
    result = subprocess.run([os.path.join(minicloud.BIN, binary)] + list(args), env=env,
                            capture_output=True, text=True, timeout=600)
    if check:
        assert result.returncode == 0, '%s %s: %s' % (binary, ' '.join(args), result.stderr)
    return result.stdout, result.stderr


def _json(cloud, *args):
    return json.loads(_cli(cloud, *(args + ('-f', 'json')))[0])


def _finished(plan):
    """The plan once it has ended, done or failed; None while it runs."""
    return plan if plan['status'] in ('done', 'failed') else None


def _delete_servers(compute, name):
    for server in scenario.list_servers(compute, name):
        scenario.ok(compute.delete('/servers/%s' % server['id']), 204)
    scenario.wait_for('servers %s deleted' % name,
                      lambda: not scenario.list_servers(compute, name), 120)


def _drs_cluster(compute):
    return [a for a in scenario.ok(compute.get('/os-aggregates'))['aggregates']
            if a['name'] == 'drs-cluster']


def _leave_no_cluster(compute):
    for aggregate in _drs_cluster(compute):
        for host in aggregate['hosts']:
            scenario.ok(compute.post('/os-aggregates/%s/action' % aggregate['id'], json={
                'remove_host': {'host': host}}))
        scenario.ok(compute.delete('/os-aggregates/%s' % aggregate['id']))


def test_an_operators_day_through_the_clis(cloud):
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    # The earlier tests' servers: the day starts on an empty cloud.
    _delete_servers(compute, None)
    try:
        _day(cloud, compute)
    finally:
        _delete_servers(compute, '^' + PREFIX)
        _leave_no_cluster(compute)
        for host in minicloud.COMPUTES:
            if scenario.state_of(compute, host) != 'active':
                _cli(cloud, 'drs', 'host', 'unsuspend', host, '--wait', check=False)
    scenario.check_invariants(cloud, compute)


def _day(cloud, compute):
    # 1. The energy report of a fresh cloud prices each host from its first
    # record: not the default 24 hours (3 x 100 W x 24 h = 7.2 kWh at idle).
    report = _json(cloud, 'drs', 'report', 'energy')
    age_hours = (time.time() - cloud.started_at) / 3600
    assert report['Hosts'] == len(minicloud.COMPUTES), report
    assert 0 < report['kWh Drawn'] <= report['Hosts'] * MAX_HOST_KW * (age_hours + 0.02), (
        report, age_hours)

    # 2. Power settings over IPMI on each BMC's own port (typed by the
    # driver's schema: the CLI sends "623" as a string).
    for host in minicloud.COMPUTES:
        options = cloud.bmc_options(host, 'ipmi')
        out, _ = _cli(cloud, 'drs', 'host', 'set', host, '--power-driver', 'ipmi',
                      '--power-mode', 'off', '--power-option', 'address=127.0.0.1',
                      '--power-option', 'port=%d' % options['port'],
                      '--power-option', 'username=%s' % minicloud.BMC_USER,
                      '--power-option', 'password=%s' % minicloud.BMC_PASSWORD,
                      '-f', 'json')
        shown = json.loads(out)
        assert (shown['power_driver'], shown['power_mode']) == ('ipmi', 'off'), shown
        assert minicloud.BMC_PASSWORD not in out

    # 3. One server per host, booted as an operator boots: no --nic (the
    # cloud's one shared network), admin placement by --host.
    for host in minicloud.COMPUTES:
        server = _json(cloud, 'server', 'create', '--os-compute-api-version', '2.74',
                       '--image', cloud.image, '--flavor', cloud.flavor, '--host', host,
                       '--wait', PREFIX + host)
        assert server['status'] == 'ACTIVE', server
        assert 'private' in str(server['addresses']), server['addresses']
        assert '10.0.0.' in str(server['addresses']), server['addresses']

    # 4. A manual cluster: the daemon offers a plan; the operator reads its id
    # and approves that id (a plan keeps its id while its content holds).
    scenario.opt_in(compute, automation='manual')
    pending = scenario.wait_for('a pending plan in drs plan list', lambda: _json(
        cloud, 'drs', 'plan', 'list', '--status', 'pending'), 120, 3)
    plan_id = pending[0]['ID']
    approved = _json(cloud, 'drs', 'plan', 'approve', str(plan_id))
    assert (approved['id'], approved['status']) == (plan_id, 'approved'), approved
    done = scenario.wait_for('plan %d done' % plan_id,
                             lambda: _finished(_json(cloud, 'drs', 'plan', 'show', str(plan_id))),
                             300, 3)
    assert done['status'] == 'done', done
    suspended = [a['host'] for a in done['actions'] if a['type'] == 'suspend']
    assert suspended, done
    for host in suspended:
        # The plan's suspend is done once the host is empty and the power
        # command sent; the host is suspended when its BMC says off.
        scenario.wait_for('%s suspended' % host,
                          lambda host=host: scenario.state_of(compute, host) == 'suspended', 120)
        assert cloud.power_status('ipmi', host) == 'off'

    # 5. Explain by name: a server the plan moved, and a suspended host (its
    # state first).
    moved = [a['instance'] for a in done['actions'] if a['type'] == 'migrate']
    assert moved, done
    name = scenario.ok(compute.get('/servers/%s' % moved[0]))['server']['name']
    rows = _json(cloud, 'drs', 'explain', 'server', name)
    assert rows, 'no decision about %s, moved by plan %d' % (name, plan_id)
    out, _ = _cli(cloud, 'lb-explain', 'server', name, binary='nova')
    assert out.strip() and 'No decisions' not in out, out
    rows = _json(cloud, 'drs', 'explain', 'host', suspended[0])
    assert rows and rows[0]['Verdict'] == 'now suspended', rows

    # 6. Every host but one suspended; maintenance of the last active one
    # wakes a suspended host to take its servers, and says so while waiting.
    active = [h for h in minicloud.COMPUTES if scenario.state_of(compute, h) == 'active']
    for host in active[1:]:
        out, _ = _cli(cloud, 'drs', 'host', 'suspend', host, '--wait', '--poll-interval',
                      '2', '-f', 'json')
        assert json.loads(out)['suspend_state'] == 'suspended', out
    last = active[0]
    out, err = _cli(cloud, 'drs', 'host', 'maintenance', 'enter', last, '--wait',
                    '--poll-interval', '2', '-f', 'json')
    assert json.loads(out)['suspend_state'] == 'maintenance', (out, err)
    assert '%s: entering_maintenance' % last in err, err
    woken = [h for h in minicloud.COMPUTES
             if h != last and scenario.state_of(compute, h) == 'active']
    assert len(woken) == 1, woken
    assert {s['OS-EXT-SRV-ATTR:host'] for s in scenario.list_servers(
        compute, '^' + PREFIX)} == set(woken)

    # 7. The exit returns once nova-compute is enabled again.
    out, _ = _cli(cloud, 'drs', 'host', 'maintenance', 'exit', last, '--wait',
                  '--poll-interval', '2', '-f', 'json')
    assert json.loads(out)['suspend_state'] == 'active', out
    service = scenario.ok(compute.get('/os-services?binary=nova-compute&host=%s' % last))
    assert service['services'][0]['status'] == 'enabled', service
