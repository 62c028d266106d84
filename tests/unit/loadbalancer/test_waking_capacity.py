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

"""A host already waking is capacity on its way: the plan waits for it.

A wake takes minutes and the daemon plans every minute. Before, each cycle of
one overload woke one more host (the closed-loop twin saw three hosts woken
for one overload, suspended again half an hour later: sleeps under an hour).
"""

from nova_drs.loadbalancer import catalog
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import planner
from tests.unit.loadbalancer import fakes

LIMITS = model.SafetyLimits(1, 0)


def _plan(second_state):
    # h0 runs at 130 %; h1 is waking (or asleep), h2 asleep.
    hosts = [fakes.host('h0'), fakes.host('h1', power_state=second_state),
             fakes.host('h2', power_state=model.SUSPENDED)]
    instances = [fakes.vm('v%d' % n, 'h0', demand=1.0, mips=325.0) for n in range(4)]
    return planner.plan(fakes.snapshot(hosts, instances), catalog.by_name('drs'), LIMITS)


def test_an_overload_wakes_one_host():
    plan = _plan(model.SUSPENDED)
    assert len(plan.wakes) == 1 and plan.migrations


def test_while_that_host_wakes_no_other_is_woken():
    plan = _plan(model.WAKING)
    assert plan.wakes == () and plan.migrations == ()


def test_what_the_waking_host_cannot_take_still_wakes_another():
    # h0 at 128 % sheds three servers of 320; waking h1 takes two within its
    # 90 % target, h2 is woken for the third.
    hosts = [fakes.host('h0', mips=2000.0, vcpus=8), fakes.host('h1', power_state=model.WAKING),
             fakes.host('h2', power_state=model.SUSPENDED)]
    instances = [fakes.vm('v%d' % n, 'h0', demand=1.0, mips=320.0) for n in range(8)]
    plan = planner.plan(fakes.snapshot(hosts, instances), catalog.by_name('drs'), LIMITS)
    assert [w.host for w in plan.wakes] == ['h2']
    assert [m.destination for m in plan.migrations] == ['h2']
