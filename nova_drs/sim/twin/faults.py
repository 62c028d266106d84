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

"""Faults the twin injects, drawn from one seed so a run repeats exactly.

Each kind draws from a stream of its own, seeded from the run's seed and
the kind's name: a change that makes the daemon send one request more or
less shifts the API faults, never where migrations fail, BMCs go silent or
leadership lapses, so a seed's figures stay comparable across changes.

Kinds (counted per kind in the output, ``faults``; rates are the defaults):

* ``nova_5xx``: nova answers 503 to one of ``API_CALLS`` (1 %); the
  daemon's connection asks again (``[drs_auth] status_code_retries``), each
  answer drawn anew;
* ``nova_hang``: one of ``API_CALLS`` never answers (0.5 %): the transport
  raises the read timeout keystoneauth raises after ``[drs_auth] timeout``,
  once the virtual clock has moved by that timeout;
* ``migration_failed``: a live migration ends in ``error`` part-way through
  (5 %; the server stays on its source);
* ``migration_stalled``: a live migration never converges and nova does not
  give up (3 %): it runs until the daemon aborts it (``[loadbalancer]
  migration_timeout``);
* ``host_no_wake``: a woken host never comes back. The first wake of the run
  always fails (so every faulty run has one), later ones with 10 %;
* ``bmc_unresponsive``: a power command (suspend, wake, status) times out
  after ``BMC_TIMEOUT`` virtual seconds (5 %);
* ``compute_without_rp``: at a placement listing (2 %) one host's resource
  provider is gone for ``RP_GONE_SECONDS`` (nova-compute re-creates it later);
* ``leader_takeover``: at a leader's ``still_leader`` call, right before an
  action (1 %), its lock lapses and the standby daemon takes over;
* ``stats_delayed`` / ``clock_skewed_hosts``: statistics batches delivered
  late and hosts whose clock is off (``ClosedLoop(stats_delay=, stats_skew=)``;
  with a fault seed and neither given, 60 s and up to 30 s).
"""

import collections
import dataclasses
import random
import re

from nova_drs.sim.twin import cloud as twin_cloud

#: The calls that may answer 503: every read of observe's full listing, the
#: move itself, the service toggle of a suspend, and the migration listings.
API_CALLS = frozenset((
    'GET /os-hypervisors/detail', 'GET /os-migrations', 'POST /servers/*/action',
    'PUT /os-services/*', 'GET /servers/detail'))
#: Seconds a power command waits for a BMC that does not answer (ipmitool's
#: default retries take about this long).
BMC_TIMEOUT = 30.0
#: Seconds a vanished resource provider stays away.
RP_GONE_SECONDS = 600.0
#: Statistics delay and clock skew of the fault mix when none is given.
STATS_DELAY, STATS_SKEW = 60.0, 30.0
KINDS = ('nova_5xx', 'nova_hang', 'migration_failed', 'migration_stalled', 'host_no_wake',
         'bmc_unresponsive', 'compute_without_rp', 'leader_takeover', 'stats_delayed',
         'clock_skewed_hosts')
_ID = re.compile(r'^[0-9a-f-]{32,36}$|^\d+$')


def call_kind(method, path):
    """'GET /servers/*/action': the method and the path with ids replaced by *."""
    for prefix in (twin_cloud.COMPUTE, twin_cloud.PLACEMENT):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return '%s %s' % (method, '/'.join('*' if _ID.match(part) else part
                                       for part in path.split('/')))


@dataclasses.dataclass(eq=False)
class Faults:
    """No faults without a seed; with one, the rates below (a dataclass: the
    rates are fields, each a keyword of the constructor with its default)."""

    seed: int | None = None
    api_error_rate: float = 0.01
    api_hang_rate: float = 0.005
    migration_failure_rate: float = 0.05
    migration_stall_rate: float = 0.03
    wake_failure_rate: float = 0.1
    bmc_failure_rate: float = 0.05
    rp_gone_rate: float = 0.02
    takeover_rate: float = 0.01

    def __post_init__(self):
        self.enabled = self.seed is not None
        self.streams = {kind: random.Random('%s/%s' % (self.seed, kind)) for kind in KINDS}
        self.rp_gone_seconds = RP_GONE_SECONDS
        self.counts = collections.Counter()
        self._wakes = 0

    def _hit(self, kind, rate):
        if self.enabled and self.streams[kind].random() < rate:
            self.counts[kind] += 1
            return True
        return False

    def api_call(self, method, path):
        """Raises the 503 of a failing call; True if the call hangs instead."""
        if call_kind(method, path) not in API_CALLS:
            return False
        if self._hit('nova_5xx', self.api_error_rate):
            raise twin_cloud.NovaError(503, 'twin fault: service unavailable')
        return self._hit('nova_hang', self.api_hang_rate)

    def migration_fails(self, server):
        return self._hit('migration_failed', self.migration_failure_rate)

    def migration_stalls(self, server):
        return self._hit('migration_stalled', self.migration_stall_rate)

    def wake_fails(self, host):
        self._wakes += 1
        return self._hit('host_no_wake', 1.0 if self._wakes == 1 else
                         self.wake_failure_rate)

    def bmc_hangs(self, host):
        return self._hit('bmc_unresponsive', self.bmc_failure_rate)

    def provider_vanishes(self, hosts):
        """The host whose resource provider disappears now, or None."""
        if hosts and self._hit('compute_without_rp', self.rp_gone_rate):
            return self.streams['compute_without_rp'].choice(hosts)
        return None

    def leader_lapses(self):
        return self._hit('leader_takeover', self.takeover_rate)

    def count(self, kind, n=1):
        """A fault the runner injects itself (late or skewed statistics)."""
        self.counts[kind] += n

    def as_dict(self):
        return {kind: self.counts.get(kind, 0) for kind in KINDS}
