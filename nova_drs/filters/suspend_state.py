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

"""Keep new instances, migrations, evacuations and unshelves off non-active hosts."""

import time

from nova.scheduler import filters
from nova.scheduler import utils as scheduler_utils
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.db import api as db_api
from nova_drs.db import hosts
from nova_drs.scheduling import request_cache

LOG = logging.getLogger(__name__)
CONF = drs_conf.CONF


class HostStateSnapshot:
    """DRS host states read in one query, with a fail-safe for DB outages.

    When the DRS database cannot be read, the last states read successfully
    are used for up to ``[drs_scheduler] state_cache_ttl`` seconds, so hosts
    last known as suspending/suspended/waking/error stay excluded. Older than
    that (or never read), no host is excluded by DRS state: the nova-drs
    daemon disables the nova-compute service of every host it suspends, so
    nova's ComputeFilter and placement still keep them out. One warning is
    logged per outage, never an exception.
    """

    def __init__(self, conf=CONF, clock=time.monotonic):
        self._conf = conf
        self._clock = clock
        self._states = None
        self._read_at = None
        self._outage = False

    def read(self, spec_obj=None):
        try:
            states = hosts.non_active_states(db_api.shared_database(self._conf))
        except Exception as exc:
            return self._fallback(exc)
        if self._outage:
            LOG.info('DRS database readable again; SuspendStateFilter uses current '
                     'host states')
            self._outage = False
        self._states, self._read_at = states, self._clock()
        return states

    def _fallback(self, exc):
        ttl = self._conf.drs_scheduler.state_cache_ttl
        fresh = self._states is not None and self._clock() - self._read_at <= ttl
        if not self._outage:
            self._outage = True
            LOG.warning('SuspendStateFilter cannot read the DRS database (%(err)s); '
                        '%(what)s',
                        {'err': exc,
                         'what': ('using host states read %.0f s ago for up to %d s'
                                  % (self._clock() - self._read_at, ttl)) if fresh else
                         'no recent host states: relying on disabled nova-compute '
                         'services to exclude suspended hosts'})
        return self._states if fresh else {}


class SuspendStateFilter(filters.BaseHostFilter):
    """Passes hosts whose DRS state is ``active``, or that nova-drs never saw.

    A host that is suspending (being emptied), suspended, waking or in error
    must not receive a new instance, a live or cold migration, an evacuation
    or an unshelve: it is about to power off, is off, or is not ready. The
    states are read once per scheduling request.
    """

    RUN_ON_REBUILD = False

    def __init__(self):
        self._snapshot = HostStateSnapshot()
        self._states = request_cache.PerRequest(self._snapshot.read)

    def filter_all(self, host_states, spec_obj):
        if scheduler_utils.request_is_rebuild(spec_obj):
            return list(host_states)
        states = self._states.get(spec_obj)
        return [host_state for host_state in host_states
                if self._passes(host_state, states)]

    def host_passes(self, host_state, spec_obj):
        return self._passes(host_state, self._states.get(spec_obj))

    @staticmethod
    def _passes(host_state, states):
        state = states.get(host_state.host, hosts.ACTIVE)
        if state != hosts.ACTIVE:
            LOG.debug('%s is in DRS state %s: excluded', host_state.host, state)
            return False
        return True
