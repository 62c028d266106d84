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

"""The daemon's side of explanations: the core's findings plus its own refusals.

The core explains what it decided from the snapshot; the daemon then knows
why a host was excluded (a deny rule, stale statistics, a disabled service),
which servers the oscillation guard held and which actions the orchestrator
refused (cooldown, migration and power limits). One row per (cycle,
subject), the shell's word overriding the core's, stored in one INSERT.
"""

from nova_drs.db import decisions
from nova_drs.loadbalancer import findings as core

EXCLUDED = core.Refusal.EXCLUDED.value
KEPT = core.Verdict.KEPT.value
NOT_MOVED = core.Verdict.NOT_MOVED.value
PLANNED = core.Verdict.PLANNED.value
APPROVED = core.Verdict.APPROVED.value
_DONE = {'migrate': core.Verdict.MOVED.value, 'suspend': core.Verdict.SUSPEND.value,
         'wake': core.Verdict.WAKE.value}


class Decisions:
    """Collects one cycle's findings, keyed by (kind, subject)."""

    def __init__(self):
        self.by_subject = {}

    def add_findings(self, found):
        for finding in found:
            self.by_subject[finding.kind, finding.subject] = (
                finding.verdict, finding.reason, finding.refusal, finding.refused)

    def refine_excluded(self, view):
        """Name what excluded a host, as the view decided it (``excluded_by``):
        a fault of its own, stale statistics, a rule, or nova."""
        for (kind, subject), (verdict, reason, refusal, refused) in list(
                self.by_subject.items()):
            if kind != core.HOST or refusal != EXCLUDED or subject not in view.excluded_by:
                continue
            refusal, why = view.excluded_by[subject]
            head = reason.split(' but kept on: ')[0]
            self.by_subject[kind, subject] = (verdict, '%s but kept on: %s' % (head, why),
                                              refusal, refused)
        self.host_faults(view.faulty_hosts)

    def host_faults(self, faulty):
        """Hosts a fault of their own left out of the cycle, whatever the core said."""
        refusal = core.Refusal.HOST_FAULT.value
        for host, fault in faulty.items():
            self.by_subject[core.HOST, host] = (
                KEPT, 'left out of this cycle: %s' % fault, refusal, ())

    def held(self, held):
        """Servers the oscillation guard kept in place (and their hosts)."""
        refusal = core.Refusal.OSCILLATION.value
        for item in held:
            self.by_subject[core.SERVER, item['instance']] = (
                NOT_MOVED, 'held on %s by the oscillation guard: %s'
                % (item['host'], item['reason']), refusal, ())
            previous = self.by_subject.get((core.HOST, item['host']))
            if previous and previous[0] == core.Verdict.SUSPEND.value:
                self.by_subject[core.HOST, item['host']] = (
                    KEPT, 'underloaded but kept on: server %s is held by the oscillation '
                    'guard' % item['instance'], refusal, ())

    def evacuations(self, actions):
        """Moves off a host planned for suspend: the host lifecycle evacuates
        it and nova's scheduler picks each destination, maybe another one."""
        suspending = {a.host for a in actions if a.kind == 'suspend'}
        for action in actions:
            key = (core.SERVER, action.instance)
            if action.kind == 'migrate' and action.source in suspending \
                    and key in self.by_subject:
                verdict, reason, refusal, refused = self.by_subject[key]
                self.by_subject[key] = (verdict, reason + ' (evacuated by the host '
                                        "lifecycle: nova's scheduler places it)",
                                        refusal, refused)

    def pending(self, actions):
        """Actions of manual clusters wait for an admin's approval: planned,
        not done (the core's verdict said what the action would be)."""
        for action in actions:
            key = _subject(action)
            if key in self.by_subject:
                _, reason, refusal, refused = self.by_subject[key]
                self.by_subject[key] = (PLANNED, reason + ' (manual cluster: planned, waiting '
                                        'for approval)', refusal, refused)

    def approved(self, plan_id, actions, result):
        """An approved plan's run this cycle (``actions``: those it ran): what
        started is done (moved, suspend, wake), and so are the moves off a host
        it suspends (the host lifecycle evacuates it); what the limits
        deferred is approved, still waiting."""
        started = result.get('done', ())
        suspended = {a.host for a in started if a.kind == 'suspend'}
        for action in started:
            self.by_subject[_subject(action)] = (
                _DONE[action.kind], 'approved plan %s: started %s' % (plan_id, _text(action)),
                None, ())
        for action in actions:
            if action.kind == 'migrate' and action.source in suspended:
                self.by_subject[_subject(action)] = (
                    _DONE['migrate'], 'approved plan %s: started %s' % (plan_id, _text(action)),
                    None, ())
        for action in result.get('waiting', ()):
            self.by_subject[_subject(action)] = (
                APPROVED, 'approved plan %s: %s waits for the per-cycle limits'
                % (plan_id, _text(action)), None, ())

    def refused(self, skipped):
        """Actions the orchestrator did not start: (db.plans.Action, why)."""
        for action, why in skipped:
            refusal = (core.Refusal.COOLDOWN if 'cooldown' in why
                       else core.Refusal.LIMIT if 'limit' in why
                       else core.Refusal.REFUSED_BY_DAEMON).value
            if action.kind == 'migrate':
                self.by_subject[core.SERVER, action.instance] = (
                    NOT_MOVED, 'planned %s -> %s (%s), not started: %s'
                    % (action.source, action.destination, action.reason, why),
                    refusal, ())
            else:
                self.by_subject[core.HOST, action.host] = (
                    KEPT, 'planned %s (%s), not started: %s'
                    % (action.kind, action.reason, why), refusal, ())

    def rows(self, cycle_at):
        return [decisions.row(cycle_at, kind, subject, verdict, reason, refusal, refused)
                for (kind, subject), (verdict, reason, refusal, refused)
                in sorted(self.by_subject.items())]


def _subject(action):
    return ((core.SERVER, action.instance) if action.kind == 'migrate'
            else (core.HOST, action.host))


def _text(action):
    if action.kind == 'migrate':
        return 'move %s -> %s (%s)' % (action.source, action.destination, action.reason)
    return '%s (%s)' % (action.kind, action.reason)
