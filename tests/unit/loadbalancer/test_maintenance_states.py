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

"""Hosts in (entering) maintenance: never a source, a destination or active capacity."""

import pytest

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes


@pytest.mark.parametrize('state', [model.ENTERING_MAINTENANCE, model.MAINTENANCE])
@pytest.mark.parametrize('name', ['drs', 'lr_mmt_1.2'])
def test_maintenance_host_is_left_alone(state, name):
    def hosts_touched(h0_state):
        hosts = [fakes.host('h0', power_state=h0_state), fakes.host('h1'), fakes.host('h2')]
        # h1 overloaded, h2 nearly idle, h0 holds one quiet server.
        instances = [fakes.vm('busy%d' % k, 'h1', demand=1.0, mips=400.0) for k in range(3)]
        instances += [fakes.vm('idle', 'h2', demand=0.05), fakes.vm('held', 'h0', demand=0.05)]
        plan = planner.plan(fakes.snapshot(hosts, instances), catalog.by_name(name),
                            model.SafetyLimits(1, 0), suspend_idle=True)
        assert plan.actions
        return {getattr(action, field, None) for action in plan.actions
                for field in ('host', 'source', 'destination')}

    assert 'h0' in hosts_touched(model.ACTIVE)   # an active h0 would be used
    assert 'h0' not in hosts_touched(state)


def test_maintenance_host_is_not_active_capacity():
    hosts = [fakes.host('h0', power_state=model.MAINTENANCE), fakes.host('h1'),
             fakes.host('h2')]
    instances = [fakes.vm('a', 'h1', demand=0.2), fakes.vm('b', 'h2', demand=0.05)]
    limits = model.SafetyLimits(2, 0)   # h1 and h2 are the only active hosts
    plan = planner.plan(fakes.snapshot(hosts, instances), catalog.by_name('drs'), limits,
                        suspend_idle=True)
    assert [a for a in plan.actions if isinstance(a, model.Suspend)] == []
    with_h0_active = fakes.snapshot([fakes.host('h0')] + hosts[1:], instances)
    plan = planner.plan(with_h0_active, catalog.by_name('drs'), limits, suspend_idle=True)
    assert [a for a in plan.actions if isinstance(a, model.Suspend)] != []
