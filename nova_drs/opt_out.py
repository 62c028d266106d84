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

"""Per-server opt-out: ``drs:automation`` on the flavor (and server metadata if trusted).

As vSphere's per-VM automation level: ``disabled`` keeps a server where the
daemon put it (never moved by a balancing plan, its host never emptied by
the daemon's own consolidation); ``manual`` lets it move only in a plan an
admin approves (clusters with ``drs_automation = manual``); in automatic
clusters it stays too.

An admin outranks it: maintenance evacuates every server, opted out or not,
and an admin suspend of a host holding opted-out servers is refused unless
forced. Which sources count is ``[loadbalancer] opt_out_sources``, read the
same way by nova-api and nova-loadbalancer: the flavor extra spec (admins
set it; nova-api validates it from compute API 2.86 on, see
nova_drs.resources.extra_specs) and, only if the operator lists it, server
metadata (any member of the project can set it). Image properties are not a
source: the image owner sets them and nova cannot validate them. A value
that is not a level (metadata, or a flavor older than the validator) is
ignored, with one warning per server, source and value.
"""

import threading

from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs.loadbalancer.model import ENTERING_MAINTENANCE

LOG = logging.getLogger(__name__)

KEY = 'drs:automation'
DISABLED = 'disabled'
MANUAL = 'manual'
LEVELS = (DISABLED, MANUAL)

FLAVOR_EXTRA_SPEC = 'flavor_extra_spec'
SERVER_METADATA = 'server_metadata'
#: Marks the state reason of an admin suspend forced past opted-out servers:
#: the daemon's evacuation moves them too (read back by ``overridden``).
FORCED = 'forced past %s=%s' % (KEY, DISABLED)

_warned = set()
_lock = threading.Lock()


def sources():
    """The opt-out sources the operator trusts, ``[loadbalancer] opt_out_sources``."""
    return drs_conf.CONF.loadbalancer.opt_out_sources


def level(metadata, extra_specs, server=None, trusted=None):
    """The server's level (DISABLED, MANUAL) or None when it may move freely.

    ``trusted``: the sources to read (default: the configured ones).
    """
    trusted = sources() if trusted is None else trusted
    for source, values in ((SERVER_METADATA, metadata), (FLAVOR_EXTRA_SPEC, extra_specs)):
        raw = (values or {}).get(KEY) if source in trusted else None
        if raw is None:
            continue
        value = str(raw).strip().lower()
        if value in LEVELS:
            return value
        _warn_once(server, source, raw)
    return None


def _warn_once(server, source, raw):
    marker = (server, source, raw)
    with _lock:
        first = marker not in _warned
        _warned.add(marker)
    if first:
        LOG.warning('server %s: ignoring invalid %s %s=%r (expected %s)',
                    server, source.replace('_', ' '), KEY, raw, ' | '.join(LEVELS))


def server_level(server):
    """Level of a nova REST server body (microversion >= 2.47 embeds the flavor)."""
    flavor = server.get('flavor') or {}
    return level(server.get('metadata'), flavor.get('extra_specs'), server.get('id'))


def may_move(level_, automation):
    """Whether a server at ``level_`` may be planned in a cluster at ``automation``."""
    return level_ is None or (level_ == MANUAL and automation == MANUAL)


def overridden(record):
    """Whether the host's evacuation moves opted-out servers too.

    Maintenance always does (an admin's request, as vSphere's maintenance
    mode); a suspend does when the admin forced it.
    """
    return (record['suspend_state'] == ENTERING_MAINTENANCE
            or FORCED in (record.get('state_reason') or ''))
