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

"""``cpu.drs``: nova's CPU monitor plus nova-drs resource plugins and samples.

Enabled with ``[DEFAULT] compute_monitors = cpu.drs``. nova-compute's
resource tracker calls ``populate_metrics`` every period, inside its
resource lock and right before the compute node record is saved, and hands
monitors the resource tracker itself. That is the only nova 34 extension
point there; the monitor uses it to:

* provide nova's standard ``cpu.*`` metrics (same code as ``virt_driver``),
  so MetricsFilter/MetricsWeigher keep working;
* run the compute resource plugins over the instances of each node and put
  their keys into the node's ``stats`` (the resource tracker's per-node
  stats too, so a claim saving the node between periods keeps them); the
  scheduler sees them as ``HostState.stats``;
* publish one statistics sample per node (notification, no database access
  from computes).
"""

from nova import context as nova_context
from nova import objects
from nova.compute.monitors.cpu import virt_driver
from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.resources import base
from nova_drs.resources import guard
from nova_drs.resources import loader
from nova_drs.stats import publisher

LOG = logging.getLogger(__name__)


def _usage(instance):
    flavor = instance.flavor
    return base.InstanceUsage(uuid=instance.uuid, vcpus=flavor.vcpus,
                              memory_mb=flavor.memory_mb,
                              extra_specs=dict(flavor.extra_specs or {}),
                              instance=instance)


def merge_report(sample, report):
    """Merge one plugin's report into the sample: dicts update, lists extend."""
    if not isinstance(report, dict):
        return
    for key, value in report.items():
        if isinstance(value, dict):
            sample.setdefault(key, {}).update(value)
        elif isinstance(value, list):
            sample.setdefault(key, []).extend(value)
        else:
            sample[key] = value


class DrsMonitor(virt_driver.Monitor):
    """nova's virt_driver CPU monitor that also drives nova-drs resource plugins."""

    def __init__(self, resource_tracker, conf=drs_conf.CONF):
        super().__init__(resource_tracker)
        self.resource_tracker = resource_tracker
        self._conf = conf
        self._previous_usages = {}
        self._written_keys = {}
        self._publisher = None
        # stevedore creates every monitor of the namespace before nova checks
        # which one is enabled: load plugins on first use, not here.
        self.plugins = None

    def _load_plugins(self):
        try:
            return loader.load(loader.COMPUTE_NAMESPACE,
                               self._conf.drs_resources.compute_resources,
                               base.ComputeResourcePlugin)
        except exception.PluginLoadError as exc:
            LOG.error('[drs_resources] compute_resources: %s; nova-drs resource '
                      'plugins are disabled on this host', exc)
            return []

    def populate_metrics(self, metric_list):
        if self.plugins is None:
            self.plugins = self._load_plugins()
        cpu_error = None
        try:
            super().populate_metrics(metric_list)
        except Exception as exc:  # re-raised below, nova logs it as for virt_driver
            cpu_error = exc
        cpu_percent = None if cpu_error else self._data.get('cpu.percent')
        for nodename, compute_node in list(self.resource_tracker.compute_nodes.items()):
            self._run_period(nodename, compute_node, cpu_percent)
        if cpu_error is not None:
            raise cpu_error

    def _run_period(self, nodename, compute_node, cpu_percent):
        periodic = guard.PeriodGuard('compute resource')
        sample = {'host': self.resource_tracker.host, 'hypervisor_hostname': nodename,
                  'compute_id': (compute_node.id if compute_node.obj_attr_is_set('id')
                                 else None),
                  'sampled_at': timeutils.utcnow().isoformat(),
                  'host_stats': {'vcpus': compute_node.vcpus}}
        if self.plugins:
            stats = self._run_plugins(periodic, nodename, compute_node, cpu_percent, sample)
            self._apply_stats(nodename, compute_node, stats)
        if self._conf.drs_stats.publish:
            try:
                if self._publisher is None:
                    self._publisher = publisher.SamplePublisher(
                        self._conf, self.resource_tracker.host)
                self._publisher.publish(sample)
            except Exception as exc:
                LOG.error('nova-drs cannot publish the statistics sample of %s: %s',
                          nodename, exc)
        periodic.flush()

    def _run_plugins(self, periodic, nodename, compute_node, cpu_percent, sample):
        context = nova_context.get_admin_context()
        instances = objects.InstanceList.get_by_host_and_node(
            context, self.resource_tracker.host, nodename, expected_attrs=['flavor'])
        usages = {instance.uuid: _usage(instance) for instance in instances}
        resources = base.HostResources(
            host=self.resource_tracker.host, nodename=nodename,
            vcpus=compute_node.vcpus, memory_mb=compute_node.memory_mb,
            cpu_percent=cpu_percent, compute_id=sample['compute_id'])
        limits = {'cpu_allocation_ratio': compute_node.cpu_allocation_ratio,
                  'ram_allocation_ratio': compute_node.ram_allocation_ratio}
        driver = self.resource_tracker.driver
        for plugin in self.plugins:
            periodic.call(plugin, 'reset', resources, driver)
        previous = self._previous_usages.get(nodename, {})
        for uuid in sorted(set(previous) - set(usages)):
            for plugin in self.plugins:
                periodic.call(plugin, 'remove_instance', previous[uuid])
        self._previous_usages[nodename] = usages
        for usage in usages.values():
            for plugin in self.plugins:
                reason = periodic.call(plugin, 'test', usage, limits)
                if reason:
                    LOG.warning('nova-drs %s: %s over capacity: %s',
                                plugin.name, nodename, reason)
                periodic.call(plugin, 'add_instance', usage)
        stats = {}
        for plugin in self.plugins:
            written = {}
            periodic.call(plugin, 'write', written)
            stats.update({key: str(value) for key, value in written.items()})
            merge_report(sample, periodic.call(plugin, 'report', default={}))
        return stats

    def _apply_stats(self, nodename, compute_node, stats):
        node_stats = self.resource_tracker.stats[nodename]
        for key in self._written_keys.get(nodename, ()):
            node_stats.pop(key, None)
        node_stats.update(stats)
        self._written_keys[nodename] = set(stats)
        compute_node.stats = node_stats
