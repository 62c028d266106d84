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

"""nova's migrations in progress, as the scheduler plugins read them.

One query per cell (``MigrationList.get_by_filters`` on the statuses below);
MigrationWeigher counts every migration touching a host, MigrationLimitFilter
only those arriving on it.
"""

import collections

from nova import context as nova_context
from nova import objects
from oslo_log import log as logging

LOG = logging.getLogger(__name__)

#: Migration statuses of a move that still holds resources on both hosts;
#: 'finished' is a cold migration/resize waiting for its confirmation.
IN_PROGRESS = ('accepted', 'queued', 'preparing', 'pre-migrating', 'migrating',
               'running', 'post-migrating', 'finished')

#: What the plugins need of one migration record.
Record = collections.namedtuple('Record', 'instance_uuid source dest')


def in_progress():
    """[Record] of every in-progress migration, all cells, one query each.

    A cell that fails or does not answer is left out with a warning; an
    exception of the listing itself propagates (the caller decides).
    """
    ctxt = nova_context.get_admin_context()
    gathered = nova_context.scatter_gather_skip_cell0(
        ctxt, objects.MigrationList.get_by_filters, {'status': list(IN_PROGRESS)})
    records = []
    for cell_uuid, result in gathered.items():
        if isinstance(result, Exception) or result is nova_context.did_not_respond_sentinel:
            LOG.warning('Cell %s did not list its migrations: %s', cell_uuid, result)
            continue
        records.extend(Record(m.instance_uuid, m.source_compute, m.dest_compute)
                       for m in result)
    return records


def per_host(records):
    """{host: number of the migrations leaving or arriving on it}."""
    counts = collections.Counter()
    for record in records:
        counts.update({record.source, record.dest} - {None})
    return dict(counts)


def arrivals(records, exclude_instance=None):
    """{host: number of the migrations arriving on it}, but ``exclude_instance``'s."""
    return dict(collections.Counter(
        record.dest for record in records
        if record.dest is not None and record.instance_uuid != exclude_instance))
