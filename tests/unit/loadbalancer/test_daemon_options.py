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

"""Core options only the daemon uses: idle-host suspension, unsuspendable hosts."""

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes


def _busy_snapshot(**host1):
    hosts = [fakes.host('host1', **host1), fakes.host('host2'), fakes.host('host3')]
    instances = [fakes.vm('a', 'host2', demand=0.6, mips=1000.0, history=[0.6] * 12),
                 fakes.vm('b', 'host3', demand=0.6, mips=1000.0, history=[0.6] * 12)]
    return fakes.snapshot(hosts, instances)


def test_idle_host_suspended_only_when_asked():
    snapshot = _busy_snapshot()
    policy = catalog.by_name('drs')
    limits = model.SafetyLimits(2, 0)
    assert planner.plan(snapshot, policy, limits).suspends == ()
    plan = planner.plan(snapshot, policy, limits, suspend_idle=True)
    assert [a.host for a in plan.suspends] == ['host1']
    assert plan.migrations == ()


def test_idle_suspension_respects_the_floor():
    plan = planner.plan(_busy_snapshot(), catalog.by_name('drs'), model.SafetyLimits(3, 0),
                        suspend_idle=True)
    assert plan.suspends == ()


def test_unsuspendable_host_is_never_suspended_but_still_receives():
    hosts = [fakes.host('host1', suspendable=False), fakes.host('host2')]
    instances = [fakes.vm('a', 'host1', demand=0.05, history=[0.05] * 12),
                 fakes.vm('b', 'host2', demand=0.05, history=[0.05] * 12)]
    plan = planner.plan(fakes.snapshot(hosts, instances), catalog.by_name('drs'),
                        model.SafetyLimits(1, 0), suspend_idle=True)
    assert 'host1' not in [a.host for a in plan.suspends]
    assert [a.host for a in plan.suspends] == ['host2']
    assert [(m.instance, m.destination) for m in plan.migrations] == [('b', 'host1')]


def test_idle_host_goes_before_busy_ones():
    """Suspending the empty host costs no migration: it goes first."""
    hosts = [fakes.host('host1'), fakes.host('host2'), fakes.host('host3')]
    instances = [fakes.vm('a', 'host2', demand=0.1, history=[0.1] * 12),
                 fakes.vm('b', 'host3', demand=0.1, history=[0.1] * 12)]
    plan = planner.plan(fakes.snapshot(hosts, instances), catalog.by_name('drs'),
                        model.SafetyLimits(2, 0), suspend_idle=True)
    assert [a.host for a in plan.suspends] == ['host1']
    assert plan.migrations == ()
