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
"""Let reno scan a merge commit that edits a note added on one of its sides.

reno's scanner diffs a merge commit against every parent. A note added on
a branch and edited while resolving the merge (d083863 did that to
explain-decisions-*.yaml) shows up as "added" relative to one parent and
"modified" relative to the other, a combination reno's ``_ChangeAggregator``
rejects (``ValueError: Unrecognized changes``), which fails the whole
``release-notes`` directive. The merge did modify a note that one parent
already had, so this extension keeps the "modify" entry of such a pair and
hands everything else to reno unchanged. Loaded by doc/source/conf.py
before ``reno.sphinxext``.
"""

from dulwich import diff_tree
from reno import scanner


def one_change_per_path(change):
    """The merge's change for one path: "modify" if one parent had it."""
    if not isinstance(change, list):
        return change
    kinds = {c.type for c in change}
    if kinds == {diff_tree.CHANGE_ADD, diff_tree.CHANGE_MODIFY}:
        return [c for c in change if c.type == diff_tree.CHANGE_MODIFY][:1]
    return change


def patch_aggregator():
    aggregator = scanner._ChangeAggregator
    original = aggregator.aggregate_changes
    if getattr(original, "_nova_drs_merges", False):
        return

    def aggregate_changes(self, walk_entry, changes):
        changes = [one_change_per_path(c) for c in changes]
        return original(self, walk_entry, changes)

    aggregate_changes._nova_drs_merges = True
    aggregator.aggregate_changes = aggregate_changes


def setup(app):
    patch_aggregator()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
