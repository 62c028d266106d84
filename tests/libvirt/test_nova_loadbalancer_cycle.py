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

"""nova-loadbalancer's own cycle on libvirt hosts: consolidate, suspend, wake, rebalance.

The mini-cloud tier's underload and overload scenarios (test_daemon.py) on
nova's real libvirt driver: every decision is the daemon's, from the load
the guests really burn (image.py: ``drs_burn`` percent of their vCPU), as
the shipped ``instance_stats`` plugin measures it inside each nova-compute
(libvirt domain stats) and nova-drs-collector stores it; every move a live
block migration through nova's API; every power change the shipped ``ipmi``
driver towards the hosts' virtual BMCs (bmc.py: power off stops the host's
nova-compute and libvirtd).

Each libvirt host reports this machine's 2 CPUs, so two guests of one vCPU
each cannot overload one with two cores to burn on. The cluster is tuned
as an oVirt operator tunes one, ``high_utilization = 40`` on its aggregate
(overload above 40 % of a host's CPU, destinations filled up to 40 %),
and the guests burn LOW_BURN and RISING_BURN:

1. underload: a guest of LOW_BURN % on each host; once the hosts are opted
   in (power_saving, automatic), the daemon empties one host onto the
   other (0.4 CPU of 0.8 allowed) and suspends it over IPMI;
2. overload: a guest of RISING_BURN % booted on the host left on takes it
   to 1.1 CPU of 2 (55 % > 40 %): the daemon wakes the suspended host
   over IPMI and moves one guest there, the smallest whose leaving brings
   the host back under 0.8 CPU as measured then (the rising guest, or the
   low guest that never moved while the rising one still warms up); the
   guests that moved are within the 1 h cooldown afterwards, and the host
   with the other two is no longer overloaded: nothing else moves.

After every move each guest still counts on its console (no second boot,
no oops) and libvirt runs it on the host nova says; each scenario ends with
the mini-cloud tier's invariant check (``scenario.check_invariants``).
"""

import time

import pytest

from tests.integration import scenario
from tests.libvirt import guests
from tests.libvirt import nova_hosts
from tests.libvirt.guests import log
from tests.libvirt.guests import wait_for

pytestmark = pytest.mark.libvirt

LOW_BURN = 20
RISING_BURN = 70
#: The cluster's high_utilization (percent of a host's CPU).
HIGH_UTILIZATION = 40
STATE = {}


def _states(drs):
    hosts = scenario.drs_hosts(drs)
    for record in hosts.values():
        assert record['suspend_state'] != 'error', record
    return {host: record['suspend_state'] for host, record in hosts.items()}


def _start_clean(nova, compute, drs):
    """No server left by an earlier module, every host active, each with its
    BMC as power driver."""
    for server in scenario.list_servers(drs, None):
        scenario.ok(drs.delete('/servers/%s' % server['id']), 204)
    wait_for('earlier servers deleted', lambda: not scenario.list_servers(drs, None), 120)
    for host in nova.hosts:
        if _states(drs)[host.name] == 'suspended':
            scenario.admin_action(drs, 'unsuspend_host', host.name)
        wait_for('%s active' % host.name, lambda h=host: _states(drs)[h.name] == 'active', 180)
        scenario.set_power(nova.cloud, drs, host.name, 'ipmi')


def _counts(compute, server_ids):
    return {s: nova_hosts.alive(guests.console(compute, s))[-1] for s in server_ids}


def _moved_since(compute, server_id, since):
    return [m for m in guests.migrations(compute, server_id)
            if scenario.utc(m['created_at']) >= since]


def test_underload_empties_a_libvirt_host_and_suspends_it(nova):
    compute, drs = nova.compute(), scenario.compute_client(nova.cloud)
    _start_clean(nova, compute, drs)
    placed = {guests.boot(nova, compute, host, LOW_BURN, 'drs-lv-low-%d' % index): host
              for index, host in enumerate(nova.hosts, 1)}
    counted = _counts(compute, placed)
    started_at = scenario.nova_now()
    scenario.opt_in(drs, hosts=[h.name for h in nova.hosts],
                    high_utilization=str(HIGH_UTILIZATION))
    asleep, took = wait_for('a host suspended by the daemon', lambda: [
        h for h in nova.hosts if _states(drs)[h.name] == 'suspended'], 240)
    [emptied] = asleep
    [kept] = [h for h in nova.hosts if h is not emptied]
    log('underload: %s emptied and suspended over IPMI %.1f s after the opt-in'
        % (emptied.name, took))
    assert emptied.pid is None, 'its libvirtd still runs'
    assert nova.cloud.power_status('ipmi', emptied.name) == 'off'
    for server_id, host in placed.items():
        moved = _moved_since(compute, server_id, started_at)
        if host is emptied:
            assert [(m['source_compute'], m['dest_compute'], m['status']) for m in moved] \
                == [(emptied.name, kept.name, 'completed')], moved
            log('%s moved %s -> %s in %.0f s (nova)' % (server_id, emptied.name, kept.name, (
                scenario.utc(moved[0]['updated_at'])
                - scenario.utc(moved[0]['created_at'])).total_seconds()))
        else:
            assert not moved, moved
        guests.goes_on(compute, server_id, counted[server_id], LOW_BURN,
                       'after %s was emptied' % emptied.name, moved=host is emptied)
        guests.runs_only_on(nova, compute, server_id, kept)
    scenario.check_invariants(nova.cloud, drs)
    STATE.update(emptied=emptied, kept=kept, low=list(placed))


def test_overload_wakes_the_libvirt_host_and_rebalances(nova):
    if 'emptied' not in STATE:
        pytest.fail('the underload scenario suspended no host', pytrace=False)
    compute, drs = nova.compute(), scenario.compute_client(nova.cloud)
    emptied, kept = STATE['emptied'], STATE['kept']
    started_at, start = scenario.nova_now(), time.monotonic()
    rising = guests.boot(nova, compute, kept, RISING_BURN, 'drs-lv-rising')
    counted = _counts(compute, STATE['low'] + [rising])
    _woken, took = wait_for('%s woken by the daemon' % emptied.name,
                            lambda: _states(drs)[emptied.name] == 'active', 240)
    woke = time.monotonic()
    log('overload: %s woken over IPMI, active %.1f s after the rising guest booted'
        % (emptied.name, woke - start))
    assert nova.cloud.power_status('ipmi', emptied.name) == 'on'
    everyone = STATE['low'] + [rising]
    moved, took = wait_for('a guest moved onto %s' % emptied.name, lambda: [
        s for s in everyone if guests.migration_done(compute, s, emptied)
        and _moved_since(compute, s, started_at)], 240)
    log('rebalance: %s moved %s -> %s, completed %.1f s after the wake' % (
        [guests.server(compute, s)['name'] for s in moved], kept.name, emptied.name,
        time.monotonic() - woke))
    wait_for('migrations settled', lambda: not any(
        s['OS-EXT-STS:task_state'] for s in scenario.list_servers(drs, None)), 60)
    # One move relieves the host (which one is the policy's: the smallest
    # whose leaving brings it under its target); none goes back.
    assert len(moved) == 1, moved
    for server_id in everyone:
        since = _moved_since(compute, server_id, started_at)
        assert [(m['source_compute'], m['dest_compute']) for m in since] == (
            [(kept.name, emptied.name)] if server_id in moved else []), (server_id, since)
        burn = RISING_BURN if server_id == rising else LOW_BURN
        guests.goes_on(compute, server_id, counted[server_id], burn, 'after the rebalance',
                       moved=bool(guests.migrations(compute, server_id)))
        guests.runs_only_on(nova, compute, server_id, emptied if server_id in moved else kept)
    scenario.check_invariants(nova.cloud, drs)
