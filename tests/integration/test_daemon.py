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

"""The daemon's own job on the multi-process mini-cloud: load it measured, power it switched.

Load comes only from the servers' traces (tests/integration/trace_driver.py,
chosen through server metadata), measured by the ``cpu.drs`` monitor inside
each nova-compute, published over RabbitMQ and stored by nova-drs-collector;
power goes through the shipped ``ipmi`` and ``redfish`` drivers to the
hosts' virtual BMCs (bmc.py). Nothing here writes statistics or DRS states.

The scenarios build on each other in this order (one cloud, a few minutes):
manual automation -> the daemon's plan waits until ``openstack drs plan
approve``, then one host is emptied and suspended, and woken again (the
other two kept on, one by a deny rule, one by a ``drs:automation=disabled``
server);
underload -> one host emptied and suspended over IPMI; overload -> that host
woken over Redfish and given servers back. test_daemon_failures.py goes on
from there. Each ends with ``scenario.check_invariants``. Figures
(underload -> suspended, wake -> first migration) are printed and kept in
``<workdir>/figures.json``.
"""

import datetime
import json
import os
import subprocess
import time

import pytest

from tests.integration import cloud as minicloud
from tests.integration import scenario

pytestmark = pytest.mark.integration

PERIOD = 5
# PlanetLab sample traces whose load rises between samples 42 and 66 (README
# of data/planetlab-sample); scaled so that the woken host is needed.
RISING_START = 42
RISING_SCALE = 4


def _pending_suspend(compute, host):
    plan = scenario.ok(compute.get('/loadbalancer/plan'))['plan']
    if plan and plan['status'] == 'pending' and any(
            a['type'] == 'suspend' and a.get('host') == host for a in plan['actions']):
        return plan
    return None


def _approve_with_cli(cloud, compute, host, attempts=8):
    """``openstack drs plan approve ID`` (the cloud venv's CLI, admin credentials).

    A cycle (5 s here) whose plan changed supersedes the pending one, so an
    approval that lost that race (409) is retried with the new plan's id.
    """
    env = dict(os.environ, OS_AUTH_URL=cloud.auth_url, OS_USERNAME='admin',
               OS_PASSWORD=minicloud.PASSWORD, OS_PROJECT_NAME='admin',
               OS_USER_DOMAIN_NAME='Default', OS_PROJECT_DOMAIN_NAME='Default',
               OS_REGION_NAME=minicloud.REGION, OS_IDENTITY_API_VERSION='3')
    errors = []
    for _attempt in range(attempts):
        plan = scenario.wait_for('a pending plan suspending %s' % host,
                                 lambda: _pending_suspend(compute, host), 60, 0.5)
        result = subprocess.run(
            [os.path.join(minicloud.BIN, 'openstack'), 'drs', 'plan', 'approve',
             str(plan['id']), '-f', 'json'], env=env, capture_output=True, text=True,
            timeout=120)
        if result.returncode == 0:
            return json.loads(result.stdout)
        assert 'only a pending plan' in result.stderr, result.stderr
        errors.append(result.stderr.strip())
    pytest.fail('no approval won against the next cycle: %s' % errors, pytrace=False)


def test_manual_automation_plan_waits_for_cli_approval_then_runs(cloud):
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    scenario.opt_in(compute, automation='manual')
    scenario.boot_spread(cloud, compute, prefix='drs-manual', per_host=2)
    target = _host_outside_cooldown(compute)
    denied, pinned = [host for host in minicloud.COMPUTES if host != target]
    # Only the target may be suspended: the next scenarios need the others.
    # One is kept on by a deny rule, the other by a server nova-drs may not
    # move (flavor extra spec drs:automation=disabled).
    rules = [scenario.ok(compute.post('/loadbalancer/rules', json={'rule': {
        'type': 'host', 'value': '^%s$' % denied, 'allow': False}}), 201)['rule']]
    [pinned_server] = scenario.boot_spread(
        cloud, compute, prefix='drs-manual-pinned', per_host=1, hosts=[pinned],
        flavor=scenario.pinned_flavor(compute))
    assert [s['id'] for s in scenario.ok(compute.get('/loadbalancer/%s' % pinned))[
        'host']['pinned_servers']] == [pinned_server]
    try:
        _manual(cloud, compute, target)
        # Give the next scenarios their host back: an admin wake over IPMI.
        scenario.admin_action(compute, 'unsuspend_host', target)
        scenario.wait_for('%s active again' % target,
                          lambda: scenario.state_of(compute, target) == 'active')
    finally:
        # Also after a failure: leftovers (a pinned server above all) would
        # fail the next scenarios for this one's reason.
        for rule in rules:
            scenario.ok(compute.delete('/loadbalancer/rules/%s' % rule['id']), 204)
        for server in scenario.list_servers(compute, '^drs-manual'):
            scenario.ok(compute.delete('/servers/%s' % server['id']), 204)
        scenario.wait_for('drs-manual servers deleted',
                          lambda: not scenario.list_servers(compute, '^drs-manual'), 120)
    scenario.check_invariants(cloud, compute)


def _host_outside_cooldown(compute):
    """A host none of whose servers moved within [loadbalancer] migration_cooldown
    (3600 s): the earlier tiers' admin suspends moved some, and the daemon rightly
    keeps a host on while it holds such a server."""
    recent = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    for host in minicloud.COMPUTES:
        servers = [s for s in scenario.list_servers(compute, None)
                   if s['OS-EXT-SRV-ATTR:host'] == host]
        if not any(scenario.utc(m['created_at']) >= recent
                   for s in servers for m in scenario.migrations_of(compute, s['id'])):
            return host
    pytest.fail('every host holds a server moved within the last hour', pytrace=False)


def _manual(cloud, compute, target):
    placed = {s['id']: s['OS-EXT-SRV-ATTR:host']
              for s in scenario.list_servers(compute, '^drs-manual')}
    started_at = scenario.nova_now()
    for host in minicloud.COMPUTES:
        scenario.set_power(cloud, compute, host, 'ipmi')
    first = scenario.wait_for('a pending plan suspending %s' % target,
                              lambda: _pending_suspend(compute, target))
    time.sleep(2 * PERIOD + 2)
    # Two more cycles planned again (the same plan keeps its id, a changed one
    # supersedes it) and moved nothing.
    later = _pending_suspend(compute, target)
    assert later and later['id'] >= first['id'], (first, later)
    assert scenario.state_of(compute, target) == 'active'
    assert {s['id']: s['OS-EXT-SRV-ATTR:host']
            for s in scenario.list_servers(compute, '^drs-manual')} == placed
    for uuid in placed:
        assert not [m for m in scenario.migrations_of(compute, uuid)
                    if scenario.utc(m['created_at']) >= started_at], uuid
    approved = _approve_with_cli(cloud, compute, target)
    assert approved['status'] == 'approved', approved
    scenario.wait_for('%s suspended after the approval' % target,
                      lambda: scenario.state_of(compute, target) == 'suspended')
    assert cloud.power_status('ipmi', target) == 'off'
    for uuid, host in placed.items():
        moved = [m for m in scenario.migrations_of(compute, uuid)
                 if scenario.utc(m['created_at']) >= started_at]
        assert len(moved) == (1 if host == target else 0), (uuid, host, moved)
    scenario.check_invariants(cloud, compute)


def test_underload_empties_a_host_and_suspends_it_over_ipmi(cloud):
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    # Still in manual automation (previous scenario): nothing moves until
    # the servers are placed and the rule is in.
    scenario.opt_in(compute, automation='manual')
    scenario.boot_spread(cloud, compute)
    placed = {s['id']: s['OS-EXT-SRV-ATTR:host'] for s in scenario.list_servers(compute)}
    # A deny rule keeps its host on, with its servers.
    denied = minicloud.COMPUTES[-1]
    rule = scenario.ok(compute.post('/loadbalancer/rules', json={'rule': {
        'type': 'host', 'value': '^%s$' % denied, 'allow': False}}), 201)['rule']
    # Kept until the overload scenario's load rises: idle, the host would be
    # the daemon's next suspend, and the later scenarios need it on.
    scenario.STATE['deny_rule'] = rule['id']
    _underload(cloud, compute, placed, denied)


def _underload(cloud, compute, placed, denied):
    before = {host for host, r in scenario.drs_hosts(compute).items()
              if r['suspend_state'] == 'suspended'}
    start = time.monotonic()
    started_at = scenario.nova_now()
    for host in minicloud.COMPUTES:
        scenario.set_power(cloud, compute, host, 'ipmi')
    scenario.opt_in(compute)

    def suspended():
        hosts = scenario.drs_hosts(compute)
        for record in hosts.values():
            assert record['suspend_state'] != 'error', record
        fresh = [h for h, r in hosts.items()
                 if r['suspend_state'] == 'suspended' and h not in before]
        return fresh[0] if fresh else None

    host = scenario.wait_for('a host suspended by the daemon', suspended)
    elapsed = time.monotonic() - start
    assert 'nova-compute-%s' % host in cloud.failed()
    assert cloud.power_status('ipmi', host) == 'off'
    moved = [uuid for uuid, where in placed.items() if where == host]
    durations = []
    for uuid in moved:
        migrations = [m for m in scenario.migrations_of(compute, uuid)
                      if scenario.utc(m['created_at']) >= started_at
                      and m['source_compute'] == host]
        assert len(migrations) == 1, (uuid, migrations)
        assert migrations[0]['status'] == 'completed', migrations[0]
        durations.append((scenario.utc(migrations[0]['updated_at'])
                          - scenario.utc(migrations[0]['created_at'])).total_seconds())
    assert host != denied
    assert scenario.drs_hosts(compute)[denied]['suspend_state'] == 'active'
    # None of its servers left it (it may have received others).
    assert {uuid for uuid, where in placed.items() if where == denied} <= {
        s['id'] for s in scenario.list_servers(compute) if s['OS-EXT-SRV-ATTR:host'] == denied}
    scenario.check_invariants(cloud, compute)
    scenario.STATE['suspended'] = host
    scenario.figures(cloud, underload_to_suspended_s=round(elapsed, 1),
                     servers_on_host=len(moved), sum_migration_s=round(sum(durations), 1),
                     period_s=PERIOD)


def test_overload_wakes_the_host_over_redfish_and_rebalances(cloud):
    scenario.require_daemon(cloud)
    if 'suspended' not in scenario.STATE:
        pytest.fail('the underload scenario suspended no host', pytrace=False)
    compute = scenario.compute_client(cloud)
    asleep = [h for h, r in scenario.drs_hosts(compute).items()
              if r['suspend_state'] == 'suspended']
    for host in asleep:
        scenario.set_power(cloud, compute, host, 'redfish')
    traces = sorted(os.listdir(minicloud.TRACE_DIR))
    since = time.time()
    for index, server in enumerate(scenario.list_servers(compute)):
        scenario.ok(compute.put('/servers/%s/metadata' % server['id'], json={'metadata': {
            'drs_trace': traces[index % len(traces)],
            'drs_trace_start': str(RISING_START), 'drs_trace_since': '%.1f' % since,
            'drs_trace_scale': str(RISING_SCALE)}}))
    start = time.monotonic()

    def woken():
        hosts = scenario.drs_hosts(compute)
        for host in asleep:
            assert hosts[host]['suspend_state'] != 'error', hosts[host]
        awake = [host for host in asleep if hosts[host]['suspend_state'] == 'active']
        return awake[0] if awake else None

    host = scenario.wait_for('one of %s woken by the daemon' % asleep, woken)
    woke = time.monotonic()
    assert cloud.power_status('redfish', host) == 'on'

    def moved_onto():
        # Several hosts may have been asleep and woken: any of them counts.
        hosts = scenario.drs_hosts(compute)
        awake = {h for h in asleep if hosts[h]['suspend_state'] == 'active'}
        landed = [s['OS-EXT-SRV-ATTR:host'] for s in scenario.list_servers(compute)
                  if s['OS-EXT-SRV-ATTR:host'] in awake and s['status'] == 'ACTIVE'
                  and not s['OS-EXT-STS:task_state']]
        return landed[0] if landed else None

    # Loaded now: the denied host may shed servers (a deny rule also keeps
    # its servers in place).
    rule = scenario.STATE.pop('deny_rule', None)
    if rule:
        scenario.ok(compute.delete('/loadbalancer/rules/%s' % rule), 204)
    host = scenario.wait_for('a server moved onto a woken host of %s' % asleep, moved_onto)
    scenario.STATE['woken'] = host
    first_migration = time.monotonic()
    scenario.wait_for('migrations settled', lambda: not any(
        s['OS-EXT-STS:task_state'] for s in scenario.list_servers(compute)), 60)
    scenario.check_invariants(cloud, compute)
    scenario.figures(cloud, overload_to_awake_s=round(woke - start, 1),
                     wake_to_first_migration_s=round(first_migration - woke, 1))
