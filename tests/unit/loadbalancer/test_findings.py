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

"""Findings: why the core gave each host and server its verdict."""

from nova_drs import loadbalancer_plugins
from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import findings
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes


def plan(hosts, vms, limits=fakes.NO_FLOOR, now=0.0, **kw):
    return planner.plan(fakes.snapshot(hosts, vms, now=now),
                        loadbalancer_plugins.build('policy', 'drs', kw), limits)


def by_subject(result):
    return {(f.kind, f.subject): f for f in result.findings}


def quiet_pair(**host_a):
    """hA nearly idle (one server), hB a little busier: hA is emptied onto hB."""
    hosts = [fakes.host('hA', **host_a), fakes.host('hB')]
    vms = [fakes.vm('a1', 'hA', 0.5)] + [fakes.vm('b%d' % i, 'hB', 0.5) for i in range(3)]
    return hosts, vms


def test_suspended_host_names_underload_and_threshold():
    result = plan(*quiet_pair())
    found = by_subject(result)
    assert [a.host for a in result.suspends] == ['hA']
    assert found['host', 'hA'].verdict == 'suspend'
    assert found['host', 'hA'].reason == 'underload: predicted 10% < underload 80%'
    assert found['host', 'hB'].refusal == findings.Refusal.RECEIVER.value
    moved = found['server', 'a1']
    assert moved.verdict == 'moved'
    assert moved.reason.startswith('underload: hA emptied to be suspended; to hB: fullest '
                                   'host within place targets (predicted 40% <= 100%)')


def test_overloaded_host_sheds_and_names_refused_candidates():
    hosts = [fakes.host('hA'), fakes.host('hB'), fakes.host('hC', mips=100.0, suspendable=False)]
    vms = ([fakes.vm('a%d' % i, 'hA', 1.0) for i in range(6)]
           + [fakes.vm('b1', 'hB', 0.1), fakes.vm('c1', 'hC', 0.1, mips=10.0)])
    result = plan(hosts, vms)
    found = by_subject(result)
    assert found['host', 'hA'].verdict == 'overloaded'
    assert found['host', 'hA'].reason == 'load 120% > overload_now 100%: servers move off'
    moves = [f for f in result.findings if f.verdict == 'moved' and f.subject[0] == 'a']
    assert moves and all(f.reason.startswith('overload: smallest-RAM server') for f in moves)
    assert ('hC', 'capacity') in moves[0].refused


def test_anti_affinity_refusal_is_named():
    hosts = [fakes.host('hA'), fakes.host('hB'), fakes.host('hC')]
    group = dict(server_group='g', group_policy=model.ANTI_AFFINITY)
    vms = ([fakes.vm('a%d' % i, 'hA', 1.0) for i in range(5)]
           + [fakes.vm('a5', 'hA', 1.0, ram_mb=128, **group),
              fakes.vm('c1', 'hC', 0.1, **group), fakes.vm('b1', 'hB', 0.1)])
    found = by_subject(plan(hosts, vms))
    assert found['server', 'a5'].verdict == 'moved'
    assert ('hC', 'affinity') in found['server', 'a5'].refused


def test_power_floor_keeps_hosts_on():
    found = by_subject(plan(*quiet_pair(), limits=model.SafetyLimits(2, 0)))
    for name in ('hA', 'hB'):
        assert found['host', name].verdict == 'kept'
        assert found['host', name].refusal == 'power floor'
        assert 'power floor: 2 active hosts, min_active_hosts + hosts_in_reserve = 2' in \
            found['host', name].reason


def test_not_suspendable_and_excluded_hosts():
    assert by_subject(plan(*quiet_pair(suspendable=False)))['host', 'hA'].refusal == \
        'not suspendable'
    assert by_subject(plan(*quiet_pair(excluded=True)))['host', 'hA'].refusal == 'excluded'


def test_cooldown_keeps_server_and_host():
    hosts, vms = quiet_pair()
    vms[0] = fakes.vm('a1', 'hA', 0.5, last_migrated_at=990.0)
    found = by_subject(plan(hosts, vms, now=1000.0, cooldown=3600.0))
    assert found['host', 'hA'].refusal == 'cooldown'
    assert found['server', 'a1'].verdict == 'not moved'
    assert found['server', 'a1'].reason == 'moved or tried 10 s ago, cooldown 3600 s'


def test_busy_host_is_within_thresholds():
    hosts = [fakes.host('hA'), fakes.host('hB')]
    vms = [fakes.vm('a%d' % i, 'hA', 0.85) for i in range(5)]
    found = by_subject(plan(hosts, vms))
    assert found['host', 'hA'].refusal == 'within thresholds'
    assert found['host', 'hA'].reason == ('load 85%, predicted 85%: predicted 85% >= '
                                          'underload 80% and within overload 100%/110%')


def test_findings_do_not_change_the_plan():
    hosts, vms = quiet_pair()
    snapshot = fakes.snapshot(hosts, vms)
    explained = planner.plan(snapshot, drs.DrsPolicy(), fakes.NO_FLOOR)
    bare = planner.plan(snapshot, drs.DrsPolicy(), fakes.NO_FLOOR, explain=False)
    assert bare.findings == () and explained.findings
    assert explained == bare


def test_refused_candidates_are_bounded():
    hosts = [fakes.host('hA')] + [fakes.host('s%d' % i, mips=100.0) for i in range(10)] + \
        [fakes.host('hB')]
    vms = [fakes.vm('a%d' % i, 'hA', 1.0) for i in range(6)]
    for found in plan(hosts, vms).findings:
        assert len(found.refused) <= findings.TOP_REFUSED


def test_finding_is_a_small_tuple():
    found = findings.Finding('host', 'h', 'kept', 'why', 'rule')
    assert found.as_dict() == {'kind': 'host', 'subject': 'h', 'verdict': 'kept',
                               'reason': 'why', 'refusal': 'rule', 'refused': ()}
