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

"""``/loadbalancer/policies``: the installed algorithms (oVirt's "policy units").

Each extension of the loadbalancer namespaces is described by the first
paragraph of its class docstring (whole, not its first line: summaries wrap)
and its optional ``PARAMETERS`` dict. An extension
that fails to import is logged and listed with its error, never a 500.
"""

import dataclasses
import importlib.metadata
import inspect
import json

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

KINDS = ('overload', 'underload', 'vm_selection', 'placement', 'policy')
NAMESPACE = 'nova_drs.loadbalancer.%s'


def _json_safe(value):
    return json.loads(json.dumps(value, default=str))


def summary(plugin):
    """The first paragraph of ``plugin``'s docstring on one line; None without
    one (a dataclass's generated ``Name(field: type, ...)`` is no description)."""
    doc = inspect.getdoc(plugin) or ''
    if dataclasses.is_dataclass(plugin) and doc.startswith(plugin.__name__ + '('):
        return None
    paragraph = doc.split('\n\n', 1)[0]
    return ' '.join(paragraph.split()) or None


def describe(kind, entry_point):
    entry = {'kind': kind, 'name': entry_point.name, 'description': None,
             'parameters': {}, 'error': None}
    try:
        plugin = entry_point.load()
    except Exception as exc:
        LOG.warning('nova-drs: cannot load %s algorithm %s (%s): %s',
                    kind, entry_point.name, entry_point.value, exc)
        entry['error'] = 'cannot be loaded: %s' % type(exc).__name__
        return entry
    entry['description'] = summary(plugin)
    parameters = getattr(plugin, 'PARAMETERS', None)
    if isinstance(parameters, dict):
        entry['parameters'] = _json_safe(parameters)
    return entry


def available():
    return [describe(kind, entry_point)
            for kind in KINDS
            for entry_point in sorted(
                importlib.metadata.entry_points(group=NAMESPACE % kind),
                key=lambda point: point.name)]


class AlgorithmsController:
    """Lists the algorithms installed in the loadbalancer namespaces."""

    def list(self, context):
        return 200, {'policies': available()}
