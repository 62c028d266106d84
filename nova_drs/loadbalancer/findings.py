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

"""Why a cycle did what it did: findings beside the plan.

Derived after the policy decided, from the working state and the policy's
own thresholds, so the hot loops pay nothing: one finding per active host
(its load against the thresholds and the verdict) and per server moved or
held back, with at most ``TOP_REFUSED`` candidate hosts that could not take
it and what refused them.  Operators read them through ``drs explain``.
"""

import enum

from nova_drs.loadbalancer import model

TOP_REFUSED = 3
#: Other hosts examined per migration to name refused candidates.
CANDIDATE_SCAN = 8
#: Migrations per plan whose refused candidates are named (the daemon's
#: limits start far fewer per cycle; this bounds a 10,000-host plan's cost).
EXPLAINED_MIGRATIONS = 1000
HOST = 'host'
SERVER = 'server'


class Verdict(str, enum.Enum):
    OVERLOADED = 'overloaded'      # relieved: servers leave it
    SUSPEND = 'suspend'            # underloaded and emptied
    WAKE = 'wake'
    KEPT = 'kept'                  # no power change (why: the refusal)
    MOVED = 'moved'
    NOT_MOVED = 'not moved'
    # A manual cluster's action: planned waits for an admin's approval,
    # approved waits for the limits; once started it is moved/suspend/wake.
    PLANNED = 'planned'
    APPROVED = 'approved'


class Refusal(str, enum.Enum):
    """What stopped an action; the daemon adds its own kinds (rule, limit,
    oscillation); a new kind is one more member here."""

    WITHIN_THRESHOLDS = 'within thresholds'
    CAPACITY = 'capacity'
    AFFINITY = 'affinity'
    PLACEMENT_TARGET = 'placement target'
    POWER_FLOOR = 'power floor'
    COOLDOWN = 'cooldown'
    EXCLUDED = 'excluded'
    STALE = 'stale statistics'
    RULE = 'rule'
    NOT_SUSPENDABLE = 'not suspendable'
    IN_FLIGHT = 'migration in flight'
    UNMOVABLE = 'unmovable server'
    RECEIVER = 'receiving servers'
    NO_ROOM = 'no room'
    LIMIT = 'limit'
    OSCILLATION = 'oscillation guard'
    REFUSED_BY_DAEMON = 'refused by the daemon'
    HOST_FAULT = 'host fault'


OVERLOAD = model.Reason.OVERLOAD.value
MOVED = Verdict.MOVED.value
KEPT = Verdict.KEPT.value
WITHIN = Refusal.WITHIN_THRESHOLDS.value
CAPACITY = Refusal.CAPACITY.value
AFFINITY = Refusal.AFFINITY.value
PLACEMENT_TARGET = Refusal.PLACEMENT_TARGET.value
SUSPEND = Verdict.SUSPEND.value
_KEPT_DRS = 'underloaded (load %.0f%%, predicted %.0f%%) but kept on: '
_TO_DRS = '; to %s: fullest host within place targets (predicted %.0f%% <= %.0f%%)'
#: Why a server moved, by (drs policy, overload): the selection rule, the destination.
_WHY_MOVED = {
    (True, True): 'overload: smallest-RAM server enough to bring %s under the placement '
                  'targets, else the largest' + _TO_DRS,
    (True, False): 'underload: %s emptied to be suspended' + _TO_DRS,
    (False, True): 'overload: selected by the policy on %s; to %s',
    (False, False): 'underload: %s emptied to be suspended; to %s',
}


class Finding(tuple):
    """One subject's verdict in one cycle: (kind, subject, verdict, reason,
    refusal, refused, args), ``refused`` being ((host, Refusal value), ...)
    of candidates that could not take a moved server.  A tuple, and the
    reason is formatted (``reason % args``) only when read: a 10,000-host
    cycle makes tens of thousands of them and stores them, not prints them."""

    __slots__ = ()
    FIELDS = ('kind', 'subject', 'verdict', 'reason', 'refusal', 'refused')

    def __new__(cls, kind, subject, verdict, reason, refusal=None, refused=(), args=None):
        return tuple.__new__(cls, (kind, subject, verdict, reason, refusal, refused, args))

    kind = property(lambda self: self[0])
    subject = property(lambda self: self[1])
    verdict = property(lambda self: self[2])
    refusal = property(lambda self: self[4])
    refused = property(lambda self: self[5])

    @property
    def reason(self):
        return self[3] if self[6] is None else self[3] % self[6]

    def as_dict(self):
        return dict(zip(self.FIELDS, (self[0], self[1], self[2], self.reason, self[4], self[5]),
                        strict=True))


def _pct(value):
    return '%.0f%%' % (value * 100)


class _Loads:
    """Start-of-cycle load per host (and the drs policy's prediction, from
    the cycle it left on the state) with the policy's thresholds, computed
    once per cycle."""

    def __init__(self, state, policy):
        self.drs = hasattr(policy, 'overload_predicted') and hasattr(state.cycle, 'start_load')
        self.policy = policy
        # Only a server with a last migration time can be cooling down.
        last = state.vm_last_migrated
        self.any_migrated = last.count(None) != len(last)
        self.now = [d / c for d, c in zip(state.start_demand, state.capacity, strict=True)]
        self.predicted = ([w / c for w, c in zip(state.cycle.start_load, state.capacity,
                                                 strict=True)] if self.drs else None)
        if self.drs:
            thresholds = 'underload %s and within overload %s/%s' % (
                _pct(policy.underload), _pct(policy.overload_now),
                _pct(policy.overload_predicted))
            self.within_template = ('load %.0f%%, predicted %.0f%%: predicted %.0f%% >= '
                                    + thresholds.replace('%', '%%'))
            now_max, predicted_max = policy.overload_now, policy.overload_predicted
            #: per host: overloaded, underloaded (at the start of the cycle)
            self.hot = [n > now_max or q > predicted_max
                        for n, q in zip(self.now, self.predicted, strict=True)]
            self.low = [q < policy.underload for q in self.predicted]
        else:
            self.hot = [False] * len(self.now)
            self.low = [not vms for vms in state.vms]

    def describe(self, i):
        if not self.drs:
            return 'load %.0f%%' % (100 * self.now[i])
        return 'load %.0f%%, predicted %.0f%%' % (100 * self.now[i], 100 * self.predicted[i])

    def overload_text(self, i):
        p = self.policy
        if self.now[i] > p.overload_now:
            return 'load %s > overload_now %s' % (_pct(self.now[i]), _pct(p.overload_now))
        return 'predicted %s > overload_predicted %s' % (
            _pct(self.predicted[i]), _pct(p.overload_predicted))

    def within(self, name, i):
        """The finding of a host the policy had no reason to touch."""
        if not self.drs:
            return Finding(HOST, name, KEPT, '%s: no action by the policy' % self.describe(i),
                           WITHIN)
        predicted = 100 * self.predicted[i]
        return tuple.__new__(Finding, (HOST, name, KEPT, self.within_template, WITHIN, (),
                                       (100 * self.now[i], predicted, predicted)))


def collect(state, policy, plan):
    """Findings of a decided ``state`` whose plan is ``plan`` (a tuple)."""
    loads = _Loads(state, policy)
    found = []
    sources, targets = {}, set()
    migrations = plan.migrations
    for action in migrations:
        sources.setdefault(action.source, action.reason)
        targets.add(action.destination)
    suspended = {a.host for a in plan.suspends}
    hot, low = loads.hot, loads.low
    for i in state.active_hosts:
        name = state.host_names[i]
        if name in suspended or name in sources or hot[i] or low[i]:
            found.extend(_host_findings(state, policy, loads, i, sources, targets, suspended))
        else:
            found.append(loads.within(name, i))
    for action in plan.wakes:
        found.append(Finding(HOST, action.host, Verdict.WAKE.value,
                             'woken: servers need capacity no active host has'))
    candidates = [(state.host_names[i], i) for i in state.active_hosts[:CANDIDATE_SCAN]
                  if state.is_usable(i)]
    found.extend(_migration_findings(state, policy, loads, migrations, candidates))
    return tuple(found)


def _migration_findings(state, policy, loads, migrations, candidates):
    """Why each server moved; refused candidates for the first
    EXPLAINED_MIGRATIONS only. The hot loop of a large plan."""
    new, drs = tuple.__new__, loads.drs
    over, under = _WHY_MOVED[drs, True], _WHY_MOVED[drs, False]
    host_index, capacity = state.host_index, state.capacity
    load = getattr(state.cycle, 'load', None)
    place = 100 * getattr(policy, 'place_predicted', 0.0)
    found = []
    for n, action in enumerate(migrations):
        source, dest = action.source, action.destination
        if drs:
            k = host_index[dest]
            args = (source, dest, 100 * load[k] / capacity[k], place)
        else:
            args = (source, dest)
        refused = () if n >= EXPLAINED_MIGRATIONS else _refused(
            state, policy, state.vm_index[action.instance], source, dest, candidates)
        found.append(new(Finding, (SERVER, action.instance, MOVED,
                                   over if action.reason == OVERLOAD else under, None,
                                   refused, args)))
    return found


def _host_findings(state, policy, loads, i, sources, targets, suspended):
    name = state.host_names[i]
    if name in suspended:
        if loads.drs:
            return [Finding(HOST, name, SUSPEND, 'underload: predicted %.0f%% < underload %.0f%%',
                            args=(100 * loads.predicted[i], 100 * policy.underload))]
        return [Finding(HOST, name, SUSPEND, 'underload: %s, emptied by the policy'
                        % loads.describe(i))]
    if sources.get(name) == OVERLOAD or loads.hot[i]:
        return _overloaded(state, policy, loads, i, name in sources)
    if loads.low[i]:
        refusal, why, cooling = _kept_why(state, policy, loads, i, name in targets)
        if loads.drs:
            found = [Finding(HOST, name, KEPT, _KEPT_DRS + why.replace('%', '%%'),
                             refusal.value, (), (100 * loads.now[i], 100 * loads.predicted[i]))]
        else:
            found = [Finding(HOST, name, KEPT, 'underloaded (%s) but kept on: %s'
                             % (loads.describe(i), why), refusal.value)]
        found.extend(_cooling_findings(state, policy, cooling))
        return found
    return [loads.within(name, i)]


def _overloaded(state, policy, loads, i, relieved):
    name = state.host_names[i]
    why = loads.overload_text(i) if loads.drs else 'overloaded: %s' % loads.describe(i)
    if relieved:
        return [Finding(HOST, name, Verdict.OVERLOADED.value, why + ': servers move off')]
    cooling = _cooling(state, policy, loads, i)
    refusal = Refusal.COOLDOWN if cooling else Refusal.NO_ROOM
    text = ('its servers were moved within the cooldown' if cooling
            else 'no movable server fits on another host')
    found = [Finding(HOST, name, Verdict.OVERLOADED.value, '%s, not relieved: %s'
                     % (why, text), refusal.value)]
    found.extend(_cooling_findings(state, policy, cooling))
    return found


def _cooling(state, policy, loads, i):
    check = getattr(policy, '_cooling', None)
    if check is None or not loads.any_migrated:
        return []
    return [j for j in state.vms[i] if check(state, j)]


def _cooling_findings(state, policy, cooling):
    return [Finding(SERVER, state.uuids[j], Verdict.NOT_MOVED.value,
                    'moved or tried %.0f s ago, cooldown %.0f s' % (
                        state.now - state.vm_last_migrated[j], policy.cooldown),
                    Refusal.COOLDOWN.value) for j in cooling]


def _kept_why(state, policy, loads, i, received):
    """(Refusal, text, cooling servers) for an underloaded host left on."""
    if state.excluded[i]:
        return Refusal.EXCLUDED, 'excluded (rules, service disabled or stale statistics)', ()
    if not state.suspendable[i]:
        return (Refusal.NOT_SUSPENDABLE, 'not suspendable (no power driver that can '
                'suspend and wake it, woken recently, or a wake failed)', ())
    if state.pinned[i]:
        return Refusal.IN_FLIGHT, 'a migration to or from it is under way', ()
    if False in map(state.movable.__getitem__, state.vms[i]):
        return Refusal.UNMOVABLE, 'it runs a server that cannot move (state, affinity)', ()
    cooling = _cooling(state, policy, loads, i)
    if cooling:
        return Refusal.COOLDOWN, '%d server(s) moved within the cooldown' % len(cooling), \
            cooling
    if received:
        return Refusal.RECEIVER, 'it receives servers this cycle', ()
    active = state.active_count(state.cluster[i])
    if active - 1 < state.limits.floor:
        return (Refusal.POWER_FLOOR, 'power floor: %d active hosts, min_active_hosts + '
                'hosts_in_reserve = %d' % (active, state.limits.floor), ())
    return Refusal.NO_ROOM, 'its servers fit on no other active host within the targets', ()


def _refused(state, policy, j, source, destination, candidates):
    """Up to TOP_REFUSED of ``candidates`` that cannot take server j now."""
    accepts = getattr(state.cycle, 'accepts', None)
    refused = []
    for name, i in candidates:
        if name == source or name == destination:
            continue
        why = _refusal(state, j, i)
        if why is None and accepts is not None and not accepts(state, j, i):
            why = PLACEMENT_TARGET
        if why is not None:
            refused.append((name, why))
            if len(refused) == TOP_REFUSED:
                break
    return tuple(refused)


def _refusal(state, j, i):
    if state.fits(j, i):
        return None
    group = state.vm_group[j]
    if (group is not None and state.vm_group_policy[j] == model.ANTI_AFFINITY
            and state.anti_affinity[group].get(i, 0) > 0):
        return AFFINITY
    return CAPACITY
