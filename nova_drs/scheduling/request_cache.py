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

"""Compute something once per scheduling request, not once per host.

nova calls a filter's ``filter_all`` once per instance of a request (and a
weigher's ``weigh_objects`` once per selection) with the same RequestSpec
object; the value computed for that object is reused until another request
comes in. Only a weak reference is kept, so a finished request is not kept
alive and a new request can never be mistaken for an old one.

With ``max_age`` (a callable returning seconds), a value is also reused by
later requests while it is younger than that: for data whose staleness by a
few seconds cannot change a decision in a way that matters.
"""

import threading
import time
import weakref


class PerRequest:
    """``get(spec_obj)`` returns ``loader(spec_obj)``, computed once per request."""

    def __init__(self, loader, max_age=None, clock=time.monotonic):
        self._loader = loader
        self._max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._request = None
        self._value = None
        self._loaded_at = None

    def _reusable(self, spec_obj):
        if self._request is not None and self._request() is spec_obj:
            return True
        if self._max_age is None or self._loaded_at is None:
            return False
        return self._clock() - self._loaded_at < self._max_age()

    def invalidate(self):
        """Forget the value: the next ``get`` loads again."""
        with self._lock:
            self._request = self._loaded_at = None

    def get(self, spec_obj):
        with self._lock:
            if self._reusable(spec_obj):
                return self._value
        value = self._loader(spec_obj)
        with self._lock:
            try:
                self._request = weakref.ref(spec_obj)
            except TypeError:  # not weak-referenceable: never reuse for it
                self._request = None
            self._value, self._loaded_at = value, self._clock()
        return value
