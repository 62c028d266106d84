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

"""``nova-drs-manage power keygen|seal|reseal``: the sealed power secrets' keys.

``keygen`` writes a key pair; ``seal`` seals every secret still stored in
clear (rows from before sealing existed) with ``[drs_power]
seal_public_key_file`` and needs no private key, so it runs anywhere
``db sync`` does (``db sync`` runs it too); ``reseal`` is the last step of a
key rotation, on the daemon's host: it opens every secret sealed for another
key with ``[drs_power] unseal_private_key_files`` and seals it again for the
current public key. Rows are rewritten by compare-and-swap, so an admin's
``host set`` meanwhile is never overwritten.
"""

import json

from nova_drs import exception
from nova_drs.cmd import subcommands
from nova_drs.db import api
from nova_drs.db import hosts as db_hosts
from nova_drs.power import base
from nova_drs.power import loader
from nova_drs.power import sealing


def _schema(driver, options):
    """The driver's schema of ``options``; None (secrets judged by name) if not installed."""
    try:
        return loader.driver_class(driver).schema_for(options)
    except exception.PowerError:
        return None


def _rows(database):
    after = None
    while True:
        rows = db_hosts.stored_power_options(database, after=after)
        if not rows:
            return
        yield from rows
        after = rows[-1][0]


def seal_stored(database, sealer, unsealer=None):
    """Seal every clear secret with ``sealer``; with ``unsealer``, also move every
    secret sealed for another key to ``sealer``'s key.

    Returns (hosts rewritten, {host: one-line error} of hosts left as they
    were). ``sealer`` None only counts: every host with a clear secret is an error.
    """
    rewritten, failed = 0, {}
    for host, driver, text in _rows(database):
        try:
            options = base.parse_options(text, host)
            schema = _schema(driver, options)
            stale = unsealer is not None and sealing.sealed_key_ids(options) - {
                sealer.key_id}
            if not stale and not sealing.clear_secrets(options, schema):
                continue
            if stale:
                options = sealing.unseal_options(options, host, unsealer)
            sealed = sealing.seal_options(options, schema, host, sealer)
        except exception.PowerError as exc:
            failed[host] = str(exc)
            continue
        if db_hosts.replace_power_options(database, host, text, json.dumps(sealed)):
            rewritten += 1
    return rewritten, failed


def _report(rewritten, failed, verb):
    print('%s the power secrets of %d host(s)' % (verb, rewritten))
    for host, error in sorted(failed.items()):
        print('%s: not %s: %s' % (host, verb, error))
    return 1 if failed else 0


def _keygen(conf):
    key = sealing.generate_key_pair(conf.category.private_key, conf.category.public_key)
    print('key pair %s: private key %s (mode 0600: nova-loadbalancer\'s host only, '
          '[drs_power] unseal_private_key_files), public key %s (nova-api nodes, '
          '[drs_power] seal_public_key_file)'
          % (key, conf.category.private_key, conf.category.public_key))
    return 0


def _sealer(conf):
    sealer = sealing.sealer_from_conf(conf)
    if sealer is None:
        raise exception.SealError('[drs_power] seal_public_key_file is not set: nothing to '
                                  'seal with ("power keygen" makes a key pair)')
    return sealer


def _seal(conf):
    database = api.Database.from_conf(conf)
    return _report(*seal_stored(database, _sealer(conf)), 'sealed')


def _reseal(conf):
    database = api.Database.from_conf(conf)
    sealer = _sealer(conf)
    rewritten, failed = seal_stored(database, sealer, sealing.unsealer_from_conf(conf))
    return _report(rewritten, failed, 'resealed for key %s' % sealer.key_id)


def add_parsers(subparsers):
    parsers = subcommands.category(subparsers, 'power', 'sealed power secrets', {
        'keygen': (_keygen, 'write a new X25519 key pair for sealing power secrets'),
        'seal': (_seal, 'seal every power secret still stored in clear with '
                        '[drs_power] seal_public_key_file (no private key needed)'),
        'reseal': (_reseal, 'key rotation: open secrets sealed for older keys with '
                            '[drs_power] unseal_private_key_files and seal them for '
                            'seal_public_key_file')})
    parsers['keygen'].add_argument('--private-key', required=True, metavar='PATH',
                                   help='file to write the private key to (must not exist)')
    parsers['keygen'].add_argument('--public-key', required=True, metavar='PATH',
                                   help='file to write the public key to (must not exist)')
