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

"""Entry points of the decision core: plan a cycle, place new instances."""

import random

from nova_drs.loadbalancer import findings
from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import state as state_mod


def plan(snapshot, policy, limits=model.DEFAULT_LIMITS, seed=0, suspend_idle=False,
         explain=True):
    """Validate the snapshot, run one decision cycle, return a Plan.

    Deterministic for a given snapshot, policy and seed.  Raises
    model.InvalidSnapshot (naming the object) instead of guessing.
    ``suspend_idle`` also suspends active hosts left without instances: a
    real empty host still draws power, while CloudSim's model (and so the
    simulator) counts it as switched off. The daemon asks for it.
    ``explain`` adds the plan's findings (why each host and server got its
    verdict); the simulator, which never reads them, turns it off.
    """
    model.validate(snapshot)
    working = state_mod.WorkingState(snapshot, limits)
    working.idle_draws_power = suspend_idle
    policy.decide(working, random.Random(seed))
    if suspend_idle:
        _suspend_idle_hosts(working)
    result = working.to_plan()
    if explain:
        result = model.Plan(result.actions, findings.collect(working, policy, result))
    return result


def _suspend_idle_hosts(working):
    """Suspend empty active hosts nothing is planned onto, floor permitting."""
    targets = {i for _j, i, _r in working.moves}
    for i in sorted(working.active_hosts, key=lambda i: working.host_names[i]):
        if not working.vms[i] and i not in targets and working.may_suspend(i):
            working.plan_suspend(i)


def initial_placement(hosts, instances, policy):
    """Place new instances one by one, in the given order, as CloudSim
    allocates VMs at creation, with the policy's own placement rule;
    returns {uuid: host name or None}."""
    snapshot = model.Snapshot(tuple(hosts), ())
    model.validate(snapshot)
    working = state_mod.WorkingState(snapshot, model.SafetyLimits(0, 0))
    result = {}
    for inst in instances:
        j = working.add_unplaced(inst)
        dest = policy.place_new(working, j)
        result[inst.uuid] = None if dest is None else working.host_names[dest]
    return result
