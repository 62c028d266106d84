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

"""Power secrets sealed for nova-loadbalancer: API nodes can write them, never read them.

The DRS database is open to every nova-api and nova-scheduler host, so a BMC
password stored there in clear is the whole fleet's password for anyone who
gets one of those hosts. Each secret option (``"secret": true`` in its
driver's schema) is therefore stored *sealed*: encrypted to a public key that
API nodes and ``nova-drs-manage`` hold (``[drs_power] seal_public_key_file``),
decryptable only with the private key that only the daemon's host holds
(``[drs_power] unseal_private_key_files``).

Why this construction: HPKE (RFC 9180) base mode with DHKEM(X25519),
HKDF-SHA256 and AES-256-GCM, the standard "sealed box" the ``cryptography``
library implements, instead of hand-rolled ECIES or RSA-OAEP wrapping an AES
key: 32-byte keys generated instantly (devstack makes one per stack), a
small fixed overhead per secret, no padding or key-size choices to get wrong,
and an authenticated ``info`` that binds each secret to its context. That
context is the host, the option's path and every non-secret sibling option
(the BMC address, URL, user...): a ciphertext copied to another host, or left
in place while someone with database write access points the host at another
BMC address, no longer opens, so the daemon never sends a password anywhere
but where the admin who set it said.

A sealed value is one string, ``drs-sealed:v1:<key id>:<base64url>``: the key
id (16 hex digits of the public key's SHA-256) tells the daemon which private
key to use, so during a key rotation it can hold the old and new keys and
``nova-drs-manage power reseal`` moves every secret to the new one.
"""

import base64
import hashlib
import json
import os
import stat

from cryptography import exceptions as crypto_exc
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import x25519

from nova_drs import exception
from nova_drs.power import base

try:
    from cryptography.hazmat.primitives import hpke
except ImportError:     # cryptography < 50, as 2025.2's and 2026.1's constraints pin
    from nova_drs.power import hpke_compat as hpke

PREFIX = 'drs-sealed:v1:'
_SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def is_sealed(value):
    return isinstance(value, str) and value.startswith(PREFIX)


def key_id(public_key):
    """16 hex digits naming a key pair in sealed values, logs and errors."""
    return hashlib.sha256(public_key.public_bytes(*_RAW)).hexdigest()[:16]


def key_id_of(token):
    """The key id a sealed value was sealed for."""
    return token[len(PREFIX):].split(':', 1)[0]


def _context(host, path, plain):
    """The HPKE ``info``: host, option path and the non-secret options next to it."""
    return json.dumps([host, path, plain], sort_keys=True, separators=(',', ':')).encode()


def _read(path, what, option):
    try:
        with open(path, 'rb') as key_file:
            return key_file.read()
    except OSError as exc:
        raise exception.SealError('[drs_power] %s: cannot read %s %s: %s'
                                  % (option, what, path, exc.strerror or exc)) from None


class Sealer:
    """Seals with a public key: what nova-api, db sync and ``power seal`` hold."""

    def __init__(self, public_key):
        self.public_key = public_key
        self.key_id = key_id(public_key)

    @classmethod
    def from_file(cls, path, option='seal_public_key_file'):
        data = _read(path, 'public key', option)
        try:
            key = serialization.load_pem_public_key(data)
        except ValueError:
            key = None
        if not isinstance(key, x25519.X25519PublicKey):
            raise exception.SealError('[drs_power] %s: %s is not an X25519 public key in PEM '
                                      '(make one with "nova-drs-manage power keygen")'
                                      % (option, path))
        return cls(key)

    def seal(self, value, host, path, plain):
        """``value`` sealed for ``host``'s option ``path`` next to ``plain`` options."""
        sealed = _SUITE.encrypt(json.dumps(value).encode(), self.public_key,
                                info=_context(host, path, plain))
        return '%s%s:%s' % (PREFIX, self.key_id,
                            base64.urlsafe_b64encode(sealed).decode('ascii'))


class Unsealer:
    """Opens sealed values with the daemon's private keys (several during a rotation)."""

    def __init__(self, private_keys=()):
        self.keys = {key_id(key.public_key()): key for key in private_keys}

    @classmethod
    def from_files(cls, paths, option='unseal_private_key_files'):
        keys = []
        for path in paths:
            data = _read(path, 'private key', option)
            mode = os.stat(path).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise exception.SealError('[drs_power] %s: %s is readable by group or others '
                                          '(mode %04o); chmod 600 it'
                                          % (option, path, mode & 0o777))
            try:
                key = serialization.load_pem_private_key(data, password=None)
            except (ValueError, TypeError):
                key = None
            if not isinstance(key, x25519.X25519PrivateKey):
                raise exception.SealError('[drs_power] %s: %s is not an unencrypted X25519 '
                                          'private key in PEM' % (option, path))
            keys.append(key)
        return cls(keys)

    def unseal(self, token, host, path, plain):
        kid = key_id_of(token)
        key = self.keys.get(kid)
        where = 'power option %r of host %s' % (path, host)
        if key is None:
            raise exception.SealError('%s is sealed for key %s, which is not among [drs_power] '
                                      'unseal_private_key_files (%s)'
                                      % (where, kid, ', '.join(sorted(self.keys)) or 'none set'))
        try:
            sealed = base64.urlsafe_b64decode(token[len(PREFIX) + len(kid) + 1:])
            return json.loads(_SUITE.decrypt(sealed, key, info=_context(host, path, plain)))
        except (crypto_exc.InvalidTag, ValueError, TypeError):
            raise exception.SealError('%s does not unseal with key %s: tampered with, or sealed '
                                      'for another host or other options; set it again'
                                      % (where, kid)) from None


def _levels(options, schema, path='', everywhere=False):
    """(dict, its schema, its dotted path) of ``options`` and of every nested option
    dict that is not itself secret (``everywhere``: every nested dict, for opening
    what was sealed whatever the names)."""
    yield options, schema, path
    for key, value in options.items():
        if isinstance(value, dict) and (everywhere or not base.is_secret(key, schema)):
            yield from _levels(value, base.child_schema(key, schema),
                               '%s.%s' % (path, key) if path else key, everywhere)


def _dotted(path, key):
    return '%s.%s' % (path, key) if path else key


def _plain(level, secret):
    """The options of one level a secret is bound to: not secret, not nested."""
    return {key: value for key, value in level.items()
            if not secret(key, value) and not isinstance(value, dict)}


def seal_options(options, schema, host, sealer):
    """Copy of ``options`` with every clear secret (per ``schema``) sealed by ``sealer``.

    Values already sealed are kept. ``sealer`` None with a clear secret left
    raises SealError naming the option: nothing is stored in clear.
    """
    sealed = json.loads(json.dumps(options))
    for level, level_schema, path in list(_levels(sealed, schema)):
        def secret(key, value, level_schema=level_schema):
            return base.is_secret(key, level_schema)
        plain = _plain(level, secret)
        for key, value in list(level.items()):
            if not secret(key, value) or is_sealed(value):
                continue
            if sealer is None:
                raise exception.SealError('power option %r is secret and no [drs_power] '
                                          'seal_public_key_file is set here to seal it with '
                                          '("nova-drs-manage power keygen" makes a key pair)'
                                          % _dotted(path, key))
            level[key] = sealer.seal(value, host, _dotted(path, key), plain)
    return sealed


def _sealed(key, value):
    return is_sealed(value)


def unseal_options(options, host, unsealer):
    """Copy of ``options`` with every sealed value opened: for the power drivers only."""
    opened = json.loads(json.dumps(options))
    for level, _, path in list(_levels(opened, None, everywhere=True)):
        plain = _plain(level, _sealed)
        for key, value in list(level.items()):
            if is_sealed(value):
                level[key] = unsealer.unseal(value, host, _dotted(path, key), plain)
    return opened


def sealed_key_ids(options):
    """Key ids of every sealed value in ``options``."""
    return {key_id_of(value) for level, _, _ in _levels(options, None, everywhere=True)
            for value in level.values() if is_sealed(value)}


def clear_secrets(options, schema):
    """Dotted paths of the secrets of ``options`` still stored in clear."""
    return [_dotted(path, key) for level, level_schema, path in _levels(options, schema)
            for key, value in level.items()
            if base.is_secret(key, level_schema) and not is_sealed(value)]


def sealer_from_conf(conf):
    """The Sealer of ``[drs_power] seal_public_key_file``, or None when unset."""
    path = conf.drs_power.seal_public_key_file
    return Sealer.from_file(path) if path else None


def unsealer_from_conf(conf):
    """The Unsealer of ``[drs_power] unseal_private_key_files`` (none set: opens nothing)."""
    return Unsealer.from_files(conf.drs_power.unseal_private_key_files or ())


def generate_key_pair(private_path, public_path):
    """Write a new key pair (private key mode 0600); refuse to overwrite. Returns its id."""
    key = x25519.X25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    for path in (private_path, public_path):
        if os.path.exists(path):
            raise exception.SealError('%s already exists; not overwriting a key' % path)
    descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, 'wb') as private_file:
        private_file.write(private_pem)
    with open(public_path, 'wb') as public_file:
        public_file.write(public_pem)
    return key_id(key.public_key())
