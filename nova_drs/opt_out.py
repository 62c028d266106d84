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

"""Per-server opt-out: the ``drs:automation`` server metadata / flavor extra spec.

As vSphere's per-VM automation level: ``disabled`` keeps a server where it is
(the daemon never moves it, never suspends or empties its host); ``manual``
lets it move only in a plan an admin approves (clusters with
``drs_automation = manual``); in automatic clusters it stays too. Server
metadata wins over the flavor. The flavor extra spec is validated by nova-api
(nova_drs.resources.extra_specs, from compute API 2.86 on); metadata cannot
be, and a flavor may predate the validator, so an invalid value is read as
``disabled``, the safe reading, and reported once per server.
"""

import logging
import threading

LOG = logging.getLogger(__name__)

KEY = 'drs:automation'
DISABLED = 'disabled'
MANUAL = 'manual'
LEVELS = (DISABLED, MANUAL)

_warned = set()
_lock = threading.Lock()


def level(metadata, extra_specs, server=None):
    """The server's level (DISABLED, MANUAL) or None when it may move freely."""
    raw, source = (metadata or {}).get(KEY), 'metadata'
    if raw is None:
        raw, source = (extra_specs or {}).get(KEY), 'flavor extra spec'
    if raw is None:
        return None
    value = str(raw).strip().lower()
    if value in LEVELS:
        return value
    marker = (server, source, raw)
    with _lock:
        first = marker not in _warned
        _warned.add(marker)
    if first:
        LOG.warning('server %s: invalid %s %s=%r (expected %s); read as %s',
                    server, source, KEY, raw, ' | '.join(LEVELS), DISABLED)
    return DISABLED


def server_level(server):
    """Level of a nova REST server body (microversion >= 2.47 embeds the flavor)."""
    flavor = server.get('flavor') or {}
    return level(server.get('metadata'), flavor.get('extra_specs'), server.get('id'))


def may_move(level_, automation):
    """Whether a server at ``level_`` may be planned in a cluster at ``automation``."""
    return level_ is None or (level_ == MANUAL and automation == MANUAL)
