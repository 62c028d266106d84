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

"""Ping-pong: a server migrated back to a host it left shortly before.

Balancers that chase noise move the same server back and forth (reported
for the Kubernetes descheduler and ProxLB); each such return is counted
so policies can be compared on it.
"""

DEFAULT_WINDOW = 3600.0


class PingPongCounter:
    """Counts returns to a host left at most ``window`` seconds before."""

    def __init__(self, window=DEFAULT_WINDOW):
        self.window = window
        self.count = 0
        self._left = {}     # server -> {host: time it left that host}

    def moved(self, server, source, destination, now):
        left = self._left.setdefault(server, {})
        when = left.get(destination)
        if when is not None and now - when <= self.window:
            self.count += 1
        left[source] = now
