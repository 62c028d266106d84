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
"""``.. aggregate-keys::``: the table of nova_drs.aggregate_keys.KEYS.

Every host-aggregate metadata key nova-drs reads is declared once in
nova_drs/aggregate_keys.py; this directive renders that declaration, so the
admin guide lists exactly the keys the code reads.
"""

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles

from nova_drs import aggregate_keys

COLUMNS = ('key', 'valid values', 'unit', 'overrides', 'several aggregates')


def _cell(text):
    return '``%s``' % text if text else ''


def table_lines():
    """The rST list-table of every key."""
    yield '.. list-table::'
    yield '   :header-rows: 1'
    yield '   :widths: 20 20 8 32 20'
    yield ''
    yield '   * - ' + '\n     - '.join(COLUMNS)
    for key in aggregate_keys.KEYS.values():
        overrides = key.overrides
        if key.deprecated_names:
            overrides += ' (formerly %s, still read with a warning)' % ', '.join(
                '``%s``' % name for name in key.deprecated_names)
        cells = (_cell(key.name), key.expected, key.unit, overrides, key.combine)
        yield '   * - ' + '\n     - '.join(c or ' ' for c in cells)


class AggregateKeys(Directive):
    has_content = False

    def run(self):
        content = StringList()
        for line in table_lines():
            for part in line.split('\n'):
                content.append(part, '<aggregate-keys>')
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, content, node)
        return node.children


def setup(app):
    app.add_directive('aggregate-keys', AggregateKeys)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
