"""Per-server opt-out: the ``drs:automation`` server metadata / flavor extra spec.

As vSphere's per-VM automation level: ``disabled`` keeps a server where it is
(the daemon never moves it, never suspends or empties its host); ``manual``
lets it move only in a plan an admin approves (clusters with
``drs_automation = manual``); in automatic clusters it stays too. Server
metadata wins over the flavor. The flavor extra spec is validated by nova-api
(nova_drs.resources.extra_specs); metadata cannot be, so an invalid value
there is read as ``disabled``, the safe reading, and reported once per server.
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
    raw = (metadata or {}).get(KEY)
    if raw is None:
        raw = (extra_specs or {}).get(KEY)
        return raw if raw in LEVELS else None  # nova-api refuses other values
    value = str(raw).strip().lower()
    if value in LEVELS:
        return value
    marker = (server, raw)
    with _lock:
        first = marker not in _warned
        _warned.add(marker)
    if first:
        LOG.warning('server %s: invalid metadata %s=%r (expected %s); read as %s',
                    server, KEY, raw, ' | '.join(LEVELS), DISABLED)
    return DISABLED


def server_level(server):
    """Level of a nova REST server body (microversion >= 2.47 embeds the flavor)."""
    flavor = server.get('flavor') or {}
    return level(server.get('metadata'), flavor.get('extra_specs'), server.get('id'))


def may_move(level_, automation):
    """Whether a server at ``level_`` may be planned in a cluster at ``automation``."""
    return level_ is None or (level_ == MANUAL and automation == MANUAL)
