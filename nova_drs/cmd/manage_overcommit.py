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

"""``nova-drs-manage overcommit sync|report``: per-aggregate ratios.

``sync`` pushes each aggregate's ``cpu_allocation_ratio`` /
``ram_allocation_ratio`` metadata into the placement inventories of its
member hosts (placement credentials: nova's ``[placement]`` section) and
records instances nova-drs has not seen land yet with the ratios of their
host at their launch (ratio history), else its current ratios. ``report``
prints physical, ratio, total, used, free and % per aggregate host, including
hosts over 100 % after a ratio was lowered.
"""

from nova_drs.cmd import subcommands
from nova_drs.db import api as db_api
from nova_drs.overcommit import nova_databases
from nova_drs.overcommit import nova_view
from nova_drs.overcommit import placement_sync


def _table(headers, rows):
    rows = [[str(cell) for cell in row] for row in rows]
    widths = [len(header) for header in headers]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]

    def _line(cells):
        return '| ' + ' | '.join(
            cell.ljust(width) for cell, width in zip(cells, widths, strict=True)) + ' |'

    rule = '+' + '+'.join('-' * (width + 2) for width in widths) + '+'
    return '\n'.join([rule, _line(headers), rule] + [_line(row) for row in rows] + [rule])


def run_sync(conf, placement, database, ctxt, aggregate=None, dry_run=False):
    """Sync ratios into placement and reconcile recorded instances; returns text."""
    aggregates = nova_view.aggregates(ctxt)
    nodes = nova_view.compute_nodes(ctxt)
    result = placement_sync.sync(placement, database, aggregates, nodes,
                                 only_aggregate=aggregate, dry_run=dry_run, conf=conf)
    recorded, forgotten = placement_sync.reconcile(
        database, nova_view.instances(ctxt), nova_view.RatioLookup(conf), dry_run=dry_run,
        hosts=list(nodes))
    verb = 'would change' if dry_run else 'changed'
    lines = []
    if result.changes:
        lines.append(_table(
            ('aggregate', 'host', 'node', 'resource class', 'old ratio', 'new ratio'),
            [(c.aggregates, c.host, c.node, c.resource_class, c.old, c.new)
             for c in result.changes]))
    lines.append('%d placement inventories %s' % (len(result.changes), verb))
    lines.append('%d instances %s with their host\'s current ratios, %d forgotten'
                 % (recorded, 'to record' if dry_run else 'recorded', forgotten))
    lines += ['WARNING: %s' % warning for warning in result.warnings]
    if result.exceeded:
        from nova_drs.overcommit import alerts  # oslo.messaging: only when alerting
    for over in result.exceeded:
        cap = over.capacity
        lines.append('WARNING: host %s %s %s at ratio %g: %.1f%% of capacity '
                     '(%g used of %g)' % (over.host, over.resource,
                                          'would be' if dry_run else 'is', cap.ratio,
                                          cap.percent, cap.used, cap.total))
        if not dry_run:
            alerts.alert(conf, over.host, over.resource, cap, 'nova-drs.manage')
    return result, '\n'.join(lines)


def run_report(conf, database, ctxt):
    """Capacity rows and their table; hosts over 100 % raise an alert."""
    rows = placement_sync.report(database, nova_view.aggregates(ctxt),
                                 nova_view.compute_nodes(ctxt))
    from nova_drs.overcommit import alerts  # oslo.messaging: only when reporting
    table = []
    for row in rows:
        cap = row.capacity
        if cap.exceeded:
            alerts.alert(conf, row.host, row.resource, cap, 'nova-drs.manage')
        table.append((row.aggregates, row.host, row.resource, '%g' % cap.physical,
                      '%g' % cap.ratio, '%g' % cap.total, '%g' % cap.used, '%g' % cap.free,
                      '%.1f%%%s' % (cap.percent, ' OVER' if cap.exceeded else '')))
    text = _table(('aggregate', 'host', 'resource', 'physical', 'ratio', 'total',
                   'used', 'free', 'used %'), table) if table else 'no host in an aggregate'
    return rows, text


def _sync(conf):
    from nova import utils as nova_utils
    ctxt = nova_databases.admin_context(conf)
    placement = nova_utils.get_sdk_adapter('placement', admin=True)
    result, text = run_sync(conf, placement, db_api.shared_database(conf), ctxt,
                            aggregate=conf.category.aggregate,
                            dry_run=conf.category.sync_dry_run)
    print(text)
    return 0


def _report(conf):
    database = db_api.shared_database(conf)  # before nova's, as it always was
    _rows, text = run_report(conf, database, nova_databases.admin_context(conf))
    print(text)
    return 0


def add_parsers(subparsers):
    parsers = subcommands.category(subparsers, 'overcommit', 'per-aggregate CPU/RAM ratios', {
        'sync': (_sync, 'push aggregate ratios into placement inventories'),
        'report': (_report, 'capacity per aggregate and host')})
    parsers['sync'].add_argument('--aggregate', help='only the hosts of this aggregate')
    parsers['sync'].add_argument('--dry-run', action='store_true', dest='sync_dry_run',
                                 help='print the changes without writing anything')
