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

Kinds (counted per kind in the output, ``faults``):

* ``nova_5xx``: nova answers 503 to one of ``API_CALLS`` with probability
  ``api_error_rate``;
* ``migration_failed``: a live migration ends in ``error`` part-way through,
  with probability ``migration_failure_rate`` (the server stays on its source);
* ``host_no_wake``: a woken host never comes back. The first wake of the run
  always fails (so every faulty run has one), later ones with probability
  ``wake_failure_rate``.
"""

import collections
import random
import re

from nova_drs.sim.twin import cloud as twin_cloud

#: The calls that may answer 503: every read of observe's full listing, the
#: move itself, the service toggle of a suspend, and the migration listings.
API_CALLS = frozenset((
    'GET /os-hypervisors/detail', 'GET /os-migrations', 'POST /servers/*/action',
    'PUT /os-services/*', 'GET /servers/detail'))
_ID = re.compile(r'^[0-9a-f-]{32,36}$|^\d+$')


def call_kind(method, path):
    """'GET /servers/*/action': the method and the path with ids replaced by *."""
    for prefix in (twin_cloud.COMPUTE, twin_cloud.PLACEMENT):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return '%s %s' % (method, '/'.join('*' if _ID.match(part) else part
                                       for part in path.split('/')))


class Faults:
    """No faults without a seed; with one, the rates below."""

    def __init__(self, seed=None, api_error_rate=0.01, migration_failure_rate=0.05,
                 wake_failure_rate=0.1):
        self.enabled = seed is not None
        self.rng = random.Random(seed)
        self.api_error_rate = api_error_rate
        self.migration_failure_rate = migration_failure_rate
        self.wake_failure_rate = wake_failure_rate
        self.counts = collections.Counter()
        self._wakes = 0

    def _hit(self, kind, rate):
        if self.enabled and self.rng.random() < rate:
            self.counts[kind] += 1
            return True
        return False

    def api_call(self, method, path):
        if call_kind(method, path) in API_CALLS and self._hit('nova_5xx',
                                                              self.api_error_rate):
            raise twin_cloud.NovaError(503, 'twin fault: service unavailable')

    def migration_fails(self, server):
        return self._hit('migration_failed', self.migration_failure_rate)

    def wake_fails(self, host):
        self._wakes += 1
        return self._hit('host_no_wake', 1.0 if self._wakes == 1 else
                         self.wake_failure_rate)

    def as_dict(self):
        return {kind: self.counts.get(kind, 0)
                for kind in ('nova_5xx', 'migration_failed', 'host_no_wake')}
