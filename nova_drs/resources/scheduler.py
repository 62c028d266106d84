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

"""Scheduler side of resource tracking: runs the consumer plugins as a filter."""

from nova.scheduler import filters
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.resources import base
from nova_drs.resources import guard
from nova_drs.resources import loader

LOG = logging.getLogger(__name__)
_FAILED = object()


class ResourceConsumersFilter(filters.BaseHostFilter):
    """Passes a host unless a scheduler consumer plugin says it lacks room.

    Enable it in ``[filter_scheduler] enabled_filters``; plugins are chosen by
    ``[drs_resources] scheduler_consumers``. For every host state, the
    consumers first read the compute node ``stats`` into ``host_state.drs``
    (a dict keyed by plugin name that weighers may read too). When the
    scheduler placed instances of the same request on the host since (nova
    raises ``num_instances`` when it consumes a host), the consumers account
    them with ``consume_from_request``. A plugin that raises is logged at
    most once per ``error_log_interval`` and does not reject the host.
    """

    RUN_ON_REBUILD = False

    def __init__(self):
        conf = drs_conf.CONF
        self._guard = guard.RateLimitedGuard('scheduler consumer',
                                             conf.drs_resources.error_log_interval)
        try:
            self.consumers = loader.load(loader.CONSUMER_NAMESPACE,
                                         conf.drs_resources.scheduler_consumers,
                                         base.SchedulerConsumerPlugin)
        except exception.PluginLoadError as exc:
            LOG.error('[drs_resources] scheduler_consumers: %s; nova-drs consumer '
                      'plugins are disabled', exc)
            self.consumers = []

    def _sync(self, host_state, spec_obj):
        """Consumers that could read this host state, after accounting placements."""
        seen = getattr(host_state, 'drs_seen_instances', None)
        if seen is None:
            host_state.drs = {}
            stats = host_state.stats or {}
            host_state.drs_consumers = [
                consumer for consumer in self.consumers
                if self._guard.call(consumer, 'update_from_compute_node', host_state,
                                    stats, default=_FAILED) is not _FAILED]
        else:
            for _placed in range(host_state.num_instances - seen):
                for consumer in host_state.drs_consumers:
                    self._guard.call(consumer, 'consume_from_request', host_state, spec_obj)
        host_state.drs_seen_instances = host_state.num_instances
        return host_state.drs_consumers

    def host_passes(self, host_state, spec_obj):
        for consumer in self._sync(host_state, spec_obj):
            if not self._guard.call(consumer, 'host_passes', host_state, spec_obj,
                                    default=True):
                return False
        return True
