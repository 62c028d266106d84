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

"""Two daemons and one leader lock, in virtual time: the takeover fault.

``TwinCoordinator`` answers the calls ``LoadBalancer`` makes on
``daemon.coordination.Coordinator`` (the tooz-backed one): ``is_leader``
once per cycle (a standby takes a free lock there), ``still_leader``
right before each action and ``fence_token`` (the term plan actions are
claimed in). The lock itself (``Election``) is what a tooz
lock is to both daemons: one holder at most. A ``leader_takeover`` fault
makes the holder's lease lapse at a ``still_leader`` call, mid-plan, and
the standby take the lock at once: that call answers False (as the real one
does once ``Lock.is_still_owner`` fails) and the standby leads from its next
``is_leader`` on.
"""

from nova_drs import exception
from nova_drs.daemon import coordination


class Election:
    """The leader lock the daemons share."""

    def __init__(self, members):
        self.members = list(members)
        self.holder = None
        self.term = 0                   # times the lock changed hands

    def take_over_from(self, member_id):
        """The lease of ``member_id`` lapsed: the next daemon holds the lock."""
        index = self.members.index(member_id)
        self.holder = self.members[(index + 1) % len(self.members)]
        self.term += 1


class TwinCoordinator:
    def __init__(self, election, member_id, faults):
        self.election = election
        self.member_id = member_id
        self.faults = faults

    def is_leader(self):
        if self.election.holder is None:
            self.election.holder = self.member_id
            self.election.term += 1
        return self.election.holder == self.member_id

    def still_leader(self):
        if self.election.holder != self.member_id:
            return False
        if self.faults.leader_lapses():
            self.election.take_over_from(self.member_id)
            return False
        return True

    def step_down(self, reason):
        if self.election.holder == self.member_id:
            self.election.holder = None

    def fence_token(self):
        if self.election.holder != self.member_id:
            raise exception.NotLeader('%s is not the leader' % self.member_id)
        return coordination.FenceToken(self.member_id, self.election.term)
