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

"""Calls into plugins that never propagate a plugin's exception."""

import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class PeriodGuard:
    """Collects plugin failures during one period and logs one line per plugin.

    Used on nova-compute: ``call`` swallows and counts exceptions, ``flush``
    at the end of the period logs one error per failing plugin.
    """

    def __init__(self, where):
        self.where = where
        self._failures = {}

    def call(self, plugin, method, *args, default=None):
        try:
            return getattr(plugin, method)(*args)
        except Exception as exc:
            failure = self._failures.setdefault(plugin.name, [0, method, exc])
            failure[0] += 1
            return default

    def failed(self, plugin):
        return plugin.name in self._failures

    def flush(self):
        for name, (count, method, exc) in sorted(self._failures.items()):
            LOG.error('nova-drs %s plugin %s failed %d time(s) this period, first in '
                      '%s(): %s: %s', self.where, name, count, method,
                      type(exc).__name__, exc)
        self._failures = {}


class RateLimitedGuard:
    """Guard for long-lived callers without periods (nova-scheduler).

    Logs a failing plugin at most once per ``interval`` seconds, with how
    many failures were swallowed since the previous line.
    """

    def __init__(self, where, interval, clock=time.monotonic):
        self.where = where
        self.interval = interval
        self._clock = clock
        self._last_logged = {}
        self._suppressed = {}

    def call(self, plugin, method, *args, default=None):
        try:
            return getattr(plugin, method)(*args)
        except Exception as exc:
            self._record(plugin.name, method, exc)
            return default

    def _record(self, name, method, exc):
        now = self._clock()
        last = self._last_logged.get(name)
        if last is not None and now - last < self.interval:
            self._suppressed[name] = self._suppressed.get(name, 0) + 1
            return
        self._last_logged[name] = now
        LOG.error('nova-drs %s plugin %s failed in %s(): %s: %s (%d more failure(s) '
                  'since the last report)', self.where, name, method,
                  type(exc).__name__, exc, self._suppressed.pop(name, 0))
