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

"""Shared part of OvercommitCoreFilter and OvercommitRamFilter: the check,
on the request's view of every host's capacity (scheduling/request_view.py)."""

from nova.scheduler import filters
from nova.scheduler import utils as scheduler_utils
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.overcommit import alerts
from nova_drs.scheduling import request_view

LOG = logging.getLogger(__name__)
CONF = drs_conf.CONF


_exceeded = alerts.ExceededTracker(CONF, publisher_id='nova-drs.scheduler')


class OvercommitFilterBase(filters.BaseHostFilter):
    """Capacity check with per-aggregate ratios and deployed-with accounting."""

    RUN_ON_REBUILD = False
    #: 'vcpus' or 'memory_mb': the RequestSpec field, the recorded amount
    #: and the name in alerts.
    RESOURCE = None
    #: The key of ``host_state.limits`` nova's resource tracker claims against.
    LIMIT = None

    def figures(self, view, host_state):
        """(physical, ratio, used, total) of RESOURCE on ``host_state``."""
        raise NotImplementedError()

    def requested(self, spec_obj):
        return getattr(spec_obj, self.RESOURCE, 0) or 0

    def set_limit(self, host_state, total):
        host_state.limits[self.LIMIT] = total

    def filter_all(self, host_states, spec_obj):
        if scheduler_utils.request_is_rebuild(spec_obj):
            return list(host_states)
        view = request_view.request_view(spec_obj)
        requested = self.requested(spec_obj)
        return [host_state for host_state in host_states
                if self._passes(view, host_state, requested)]

    def host_passes(self, host_state, spec_obj):
        return self._passes(request_view.request_view(spec_obj), host_state,
                            self.requested(spec_obj))

    def _passes(self, view, host_state, requested):
        physical, ratio, used, total = self.figures(view, host_state)
        if not physical:
            # Nothing reported yet (nova's own filters pass such hosts too).
            return True
        self.set_limit(host_state, total)
        if used > total or _exceeded.watching(host_state.host, self.RESOURCE):
            _exceeded.observe(host_state.host, self.RESOURCE, used > total,
                              lambda: request_view.capacity(physical, ratio, used, total))
        if requested > total - used:
            LOG.debug('%(host)s: %(res)s requested %(req)s, free %(free)s of '
                      '%(total)s (ratio %(ratio)s)',
                      {'host': host_state.host, 'res': self.RESOURCE, 'req': requested,
                       'free': total - used, 'total': total, 'ratio': ratio})
            return False
        return True
