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

"""What the DRS filters and weighers know about one scheduling request.

Each host's effective ratios are worked out once per request; the recorded
deployed-with usage is read once per request (or reused for
``[drs_scheduler] cache_seconds``). The overcommit filters and the DRS
weighers read the same view, so they agree on every host's capacity.
"""

import threading

from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api
from nova_drs.db import overcommit as db_overcommit
from nova_drs.overcommit import accounting
from nova_drs.overcommit import ratios
from nova_drs.scheduling import request_cache

LOG = logging.getLogger(__name__)
CONF = drs_conf.CONF


class _RecordedUsage:
    """Recorded deployed-with ratios of all hosts, in one query.

    If the DRS database cannot be read, every instance counts at its flavor
    size (as if deployed with the current ratio), which is exactly nova's own
    accounting; one warning is logged per outage.
    """

    def __init__(self):
        self._outage = False
        self._lock = threading.Lock()

    def read(self, spec_obj=None):
        try:
            usage = db_overcommit.usage_by_host(db_api.shared_database(CONF))
        except Exception as exc:
            with self._lock:
                first, self._outage = not self._outage, True
            if first:
                LOG.warning('Overcommit filters cannot read the DRS database (%s): '
                            'counting every instance at its flavor size until it '
                            'is back', exc)
            return {}
        with self._lock:
            self._outage = False
        return usage


_usage = request_cache.PerRequest(_RecordedUsage().read,
                                  max_age=lambda: CONF.drs_scheduler.cache_seconds)
#: {host: (cpu ratio, ram ratio)} as last seen by this scheduler. A host whose
#: ratio changed may have instances recorded with the old ratio after the
#: cached usage was read, so a change forces a fresh read.
_ratios_seen = {}


class RequestView:
    """What the DRS plugins know for one scheduling request.

    Values derived from aggregate metadata are memoised per set of aggregate
    objects (hosts share them), not per host.
    """

    def __init__(self, spec_obj):
        self._spec_obj = spec_obj
        self.usage = _usage.get(spec_obj)
        self._reloaded = False
        self._memo = {}
        self._host_ratios = {}

    def memo(self, key, compute):
        value = self._memo.get(key, _MISSING)
        if value is _MISSING:
            value = self._memo[key] = compute()
        return value

    def per_aggregates(self, name, host_state, compute):
        """``compute()`` once per distinct aggregate membership in this request."""
        return self.memo((name, tuple(map(id, host_state.aggregates))), compute)

    def ratios(self, host_state):
        """(cpu ratio, ram ratio): aggregates' smallest valid, else the host's own."""
        value = self._host_ratios.get(host_state.host)
        if value is None:
            own = (host_state.cpu_allocation_ratio, host_state.ram_allocation_ratio)
            value = self._host_ratios[host_state.host] = self.per_aggregates(
                ('ratios', own), host_state,
                lambda: ratios.host_ratios(host_state.aggregates, *own))
            self._check_ratio_change(host_state.host, value)
        return value

    def _check_ratio_change(self, host, value):
        seen = _ratios_seen.get(host)
        if seen == value:
            return
        _ratios_seen[host] = value
        if seen is not None and not self._reloaded:
            LOG.debug('Allocation ratios of %s changed %s -> %s: re-reading usage',
                      host, seen, value)
            _usage.invalidate()
            self.usage = _usage.get(self._spec_obj)
            self._reloaded = True

    def recorded(self, host, resource):
        return self.usage.get(host, _EMPTY).get(resource, _EMPTY)

    def cpu_figures(self, host_state, extra=0):
        """(physical, ratio, used, total) vCPUs."""
        ratio = self.ratios(host_state)[0]
        used, total = accounting.used_and_total(
            host_state.vcpus_total, ratio, host_state.vcpus_used + extra,
            self.recorded(host_state.host, 'vcpus'))
        return host_state.vcpus_total, ratio, used, total

    def ram_figures(self, host_state, extra=0):
        """(physical, ratio, used, total) MB of RAM."""
        ratio = self.ratios(host_state)[1]
        physical = host_state.total_usable_ram_mb
        used, total = accounting.used_and_total(
            physical, ratio, physical - host_state.free_ram_mb + extra,
            self.recorded(host_state.host, 'memory_mb'))
        return physical, ratio, used, total

    def cpu(self, host_state, extra=0):
        return capacity(*self.cpu_figures(host_state, extra))

    def ram(self, host_state, extra=0):
        return capacity(*self.ram_figures(host_state, extra))


def capacity(physical, ratio, used, total):
    return accounting.Capacity(physical=physical, ratio=ratio, total=total, used=used)


_MISSING = object()
_EMPTY = {}
_views = request_cache.PerRequest(RequestView)


def request_view(spec_obj):
    """The RequestView of ``spec_obj``'s request: one per request, whoever asks."""
    return _views.get(spec_obj)
