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

"""Load plugins named in an option: entry point names or ``module:Class``."""

from oslo_log import log as logging
from oslo_utils import importutils
from stevedore import extension

from nova_drs import exception

LOG = logging.getLogger(__name__)

COMPUTE_NAMESPACE = 'nova_drs.compute.resources'
CONSUMER_NAMESPACE = 'nova_drs.scheduler.consumers'


def load(namespace, names, base_class):
    """Instances of the plugins ``names`` in order; bad names raise PluginLoadError.

    A name with ":" is a "package.module:Class" path, anything else an entry
    point of ``namespace``.
    """
    names = [name.strip() for name in names if name.strip()]
    if not names:
        return []
    entry_points = {ext.name: ext for ext in extension.ExtensionManager(namespace)}
    plugins = []
    for name in names:
        if ':' in name:
            module, _, cls = name.partition(':')
            try:
                plugin_class = importutils.import_class('%s.%s' % (module, cls))
            except (ImportError, ValueError, AttributeError) as exc:
                raise exception.PluginLoadError('cannot import plugin %s: %s'
                                                % (name, exc)) from None
        elif name in entry_points:
            plugin_class = entry_points[name].plugin
        else:
            raise exception.PluginLoadError(
                'unknown plugin %r: not an entry point of %s (known: %s)'
                % (name, namespace, ', '.join(sorted(entry_points)) or 'none'))
        if not (isinstance(plugin_class, type) and issubclass(plugin_class, base_class)):
            raise exception.PluginLoadError('plugin %s is not a %s' % (name, base_class.__name__))
        try:
            plugin = plugin_class()
        except Exception as exc:
            raise exception.PluginLoadError('cannot create plugin %s: %s' % (name, exc)) from None
        plugin.name = name
        plugins.append(plugin)
    LOG.info('Loaded %s plugins: %s', namespace, ', '.join(names))
    return plugins
