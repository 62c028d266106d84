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

"""The daemon's refusals refine the core's findings: rule, stale, guard, limits."""

import types

from nova_drs.daemon import explain
from nova_drs.daemon import observe
from nova_drs.db import plans
from nova_drs.loadbalancer import findings
from nova_drs.loadbalancer import model


def view(excluded_by=None, faulty=None):
    return types.SimpleNamespace(excluded_by=excluded_by or {}, faulty_hosts=faulty or {})


def excluded(host):
    return findings.Finding('host', host, 'kept', 'underloaded (load 5%) but kept on: '
                            'excluded (rules, service disabled or stale statistics)',
                            'excluded')


def rows(record):
    return {(r['subject_type'], r['subject']): r for r in record.rows('now')}


def test_deny_rule_is_named_and_stale_statistics_said():
    record = explain.Decisions()
    record.add_findings([excluded('h1'), excluded('h2')])
    record.refine_excluded(view({'h1': ('rule', 'denied by rule 7 (aggregate gold)'),
                                 'h2': ('stale statistics', 'stale statistics (no fresh '
                                        'sample within stats_max_age)')}))
    found = rows(record)
    assert found['host', 'h1']['refusal'] == 'rule'
    assert found['host', 'h1']['reason'] == ('underloaded (load 5%) but kept on: denied by '
                                             'rule 7 (aggregate gold)')
    assert found['host', 'h2']['refusal'] == 'stale statistics'


def test_a_host_fault_is_named_whatever_else_excluded_the_host():
    record = explain.Decisions()
    record.add_findings([excluded('h1')])
    fault = observe.HostFault('no_resource_provider',
                              'placement lists no resource provider for its compute node n1')
    stale = ('stale statistics', 'stale statistics')
    record.refine_excluded(view({'h1': stale, 'h2': stale}, faulty={'h1': fault, 'h2': fault}))
    found = rows(record)
    for host in ('h1', 'h2'):
        assert found['host', host]['refusal'] == 'host fault'
        assert found['host', host]['reason'] == (
            'left out of this cycle: placement lists no resource provider for its '
            'compute node n1')


def test_excluded_without_rule_or_staleness_is_nova():
    record = explain.Decisions()
    record.add_findings([excluded('h1')])
    record.refine_excluded(view({'h1': ('excluded', 'nova service disabled or forced down')}))
    assert 'nova service disabled' in rows(record)['host', 'h1']['reason']


def test_oscillation_guard_and_orchestrator_refusals_override_the_plan():
    record = explain.Decisions()
    record.add_findings([findings.Finding('server', 's1', 'moved', 'overload ...'),
                         findings.Finding('server', 's2', 'moved', 'overload ...'),
                         findings.Finding('host', 'h3', 'suspend', 'underload ...'),
                         findings.Finding('host', 'h4', 'suspend', 'underload ...')])
    record.held([{'instance': 's1', 'host': 'h3', 'moves': 3, 'reason': 'moved 3 times'}])
    migrate = plans.Action(model.Migrate('s2', 'h1', 'h2', 'overload'))
    suspend = plans.Action(model.Suspend('h4', 'underload'))
    record.refused([(migrate, 'moved 0:01:00 ago (cooldown)'),
                    (suspend, 'cluster at its suspend limit for this cycle')])
    found = rows(record)
    assert (found['server', 's1']['verdict'], found['server', 's1']['refusal']) == \
        ('not moved', 'oscillation guard')
    assert found['host', 'h3']['refusal'] == 'oscillation guard'
    assert found['server', 's2']['refusal'] == 'cooldown'
    assert found['server', 's2']['reason'] == ('planned h1 -> h2 (overload), not started: '
                                               'moved 0:01:00 ago (cooldown)')
    assert (found['host', 'h4']['verdict'], found['host', 'h4']['refusal']) == ('kept', 'limit')


def test_rows_carry_refused_candidates_as_json():
    record = explain.Decisions()
    record.add_findings([findings.Finding('server', 's1', 'moved', 'why', None,
                                          (('h2', 'capacity'),))])
    assert rows(record)['server', 's1']['refused'] == '[["h2", "capacity"]]'


def test_manual_cluster_actions_wait_for_approval():
    record = explain.Decisions()
    record.add_findings([findings.Finding('host', 'h1', 'suspend', 'underload ...')])
    record.pending([plans.Action(model.Suspend('h1', 'underload'), 'c1', plans.MANUAL)])
    assert rows(record)['host', 'h1']['reason'] == ('underload ... (manual cluster: planned, '
                                                    'waiting for approval)')
    assert rows(record)['host', 'h1']['verdict'] == 'planned'


def test_approved_actions_are_done_once_started_and_approved_while_waiting():
    record = explain.Decisions()
    suspend = plans.Action(model.Suspend('h1', 'underload'), 'c1', plans.MANUAL)
    evacuated = plans.Action(model.Migrate('s1', 'h1', 'h2', 'underload'), 'c1', plans.MANUAL)
    deferred = plans.Action(model.Migrate('s2', 'h3', 'h2', 'overload'), 'c1', plans.MANUAL)
    record.approved(7, [evacuated, suspend, deferred],
                    {'done': [suspend], 'waiting': [deferred], 'skipped': []})
    found = rows(record)
    assert found['host', 'h1']['verdict'] == 'suspend'
    assert found['host', 'h1']['reason'] == 'approved plan 7: started suspend (underload)'
    assert found['server', 's1']['verdict'] == 'moved'
    assert found['server', 's2']['verdict'] == 'approved'
    assert 'waits for the per-cycle limits' in found['server', 's2']['reason']
