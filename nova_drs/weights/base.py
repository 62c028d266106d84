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

"""What the DRS weighers share: the host's cluster policy, load figures,
per-aggregate multipliers and the weigher that acts on one policy only.

Which DRS weigher acts on a host is decided by nova_drs.cluster_policy, the
resolver the daemon uses too: aggregate metadata ``drs_policy`` = ``none`` |
``even_distribution`` | ``power_saving``, else ``[loadbalancer]
default_policy``. Every aggregate key is read through nova_drs.aggregate_keys
(invalid values are ignored with one warning).
"""

from nova.scheduler import weights

from nova_drs import aggregate_keys
from nova_drs import cluster_policy
from nova_drs import conf as drs_conf
from nova_drs.scheduling import request_view

CONF = drs_conf.CONF

#: Measured load the compute_resources plugins put into HostState.stats.
STAT_CPU_PERCENT = 'drs_cpu_used_percent'
STAT_MEMORY_USED_MB = 'drs_memory_used_mb'
STAT_MEMORY_TOTAL_MB = 'drs_memory_total_mb'

#: One resolver (and so one warn-once) for the scheduler process.
RESOLVER = cluster_policy.Resolver()


def _aggregates(host_state):
    return [(a.name, a.metadata) for a in host_state.aggregates or ()]


def host_policy(host_state):
    return RESOLVER.host_policy(_aggregates(host_state), CONF.loadbalancer.default_policy)


def high_utilization(host_state):
    """Threshold in percent: the host's DRS cluster's ``high_utilization``
    (the value the daemon plans that cluster with), else the option."""
    return RESOLVER.cluster_value(_aggregates(host_state), aggregate_keys.HIGH_UTILIZATION_KEY,
                                  CONF.drs_scheduler.high_utilization_percent)


def view_policy(view, host_state):
    return view.per_aggregates('policy', host_state, lambda: host_policy(host_state))


def view_high_utilization(view, host_state):
    return view.per_aggregates('high', host_state, lambda: high_utilization(host_state))


def _percent(figures):
    _physical, _ratio, used, total = figures
    return 100.0 * used / total if total > 0 else 100.0


def allocated_percent(view, host_state, spec_obj=None):
    """Higher of CPU and RAM allocation in percent (with the request, if given)."""
    extra_cpu = (getattr(spec_obj, 'vcpus', 0) or 0) if spec_obj is not None else 0
    extra_ram = (getattr(spec_obj, 'memory_mb', 0) or 0) if spec_obj is not None else 0
    return max(_percent(view.cpu_figures(host_state, extra_cpu)),
               _percent(view.ram_figures(host_state, extra_ram)))


class AggregateMultiplier:
    """A weigher's multiplier (option, overridden by aggregate metadata).

    nova asks for it once per host after each weighing pass; the value only
    depends on the host's aggregates, so it is worked out once per distinct
    aggregate membership and forgotten at the next pass (``reset``).
    """

    def __init__(self, metadata_key, option_name):
        self._metadata_key = metadata_key
        self._option_name = option_name
        self._memo = {}

    def reset(self):
        self._memo = {}

    def __call__(self, host_state):
        memo = self._memo
        key = tuple(map(id, host_state.aggregates))
        value = memo.get(key)
        if value is None:
            value = memo[key] = RESOLVER.smallest(
                _aggregates(host_state), self._metadata_key,
                getattr(CONF.drs_scheduler, self._option_name))
        return value


def measured_load_percent(view, host_state):
    """Load in percent: the higher of measured CPU/RAM use and the allocation.

    The measurement is as old as the last compute report; instances placed
    since then already count in the allocation (oVirt: "pending resources
    must be counted"), so a burst of boots still spreads.
    """
    allocated = allocated_percent(view, host_state)
    stats = host_state.stats or {}
    try:
        cpu = float(stats[STAT_CPU_PERCENT])
        memory = 100.0 * float(stats[STAT_MEMORY_USED_MB]) / float(stats[STAT_MEMORY_TOTAL_MB])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return allocated
    return max(cpu, memory, allocated)


class ClusterPolicyWeigher(weights.BaseHostWeigher):
    """Weighs hosts whose cluster policy is ``POLICY`` with ``_weigh``; others 0.

    ``MULTIPLIER``: (aggregate metadata key, ``[drs_scheduler]`` option).
    """

    minval = 0
    maxval = 100
    POLICY = None
    MULTIPLIER = (None, None)

    def __init__(self):
        self._multiplier = AggregateMultiplier(*self.MULTIPLIER)

    def weight_multiplier(self, host_state):
        return self._multiplier(host_state)

    def weigh_objects(self, weighed_obj_list, spec_obj):
        self._multiplier.reset()
        view = request_view.request_view(spec_obj)
        return [self._policy_weight(view, weighed.obj, spec_obj)
                for weighed in weighed_obj_list]

    def _weigh_object(self, host_state, spec_obj):
        return self._policy_weight(request_view.request_view(spec_obj), host_state,
                                   spec_obj)

    def _policy_weight(self, view, host_state, spec_obj):
        if view_policy(view, host_state) != self.POLICY:
            return 0.0
        return self._weigh(view, host_state, spec_obj)

    def _weigh(self, view, host_state, spec_obj):
        raise NotImplementedError
