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

"""HPKE (RFC 9180) for ``cryptography`` releases without ``hazmat.primitives.hpke``.

Why this exists: the sealed power secrets (``sealing.py``) use the HPKE
"sealed box" of ``cryptography`` >= 50, but the upper-constraints of
2025.2 and 2026.1 pin ``cryptography`` 43.0.3, and installing nova-drs must
not upgrade a library under the host's nova. This module is the same
construction, built from primitives ``cryptography`` 43 has (X25519,
HKDF-Expand, AES-GCM; HKDF-Extract is one HMAC): only the suite sealing.py
uses (base mode, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM), one
message per context, output ``enc || ciphertext`` as ``hpke.Suite.encrypt``
returns it. Values sealed by either open with the other
(tests/unit/power/test_hpke_compat.py checks both ways against the real
module, and a fixed vector on every release). sealing.py imports it only
when ``hpke`` is missing.
"""

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import x25519
from cryptography.hazmat.primitives.ciphers import aead
from cryptography.hazmat.primitives.kdf import hkdf


class KEM:
    X25519 = 0x0020


class KDF:
    HKDF_SHA256 = 0x0001


class AEAD:
    AES_256_GCM = 0x0002


_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)
_KEM_SUITE = b'KEM' + KEM.X25519.to_bytes(2, 'big')
_N_SECRET = 32      # Nsecret of DHKEM(X25519, HKDF-SHA256), Nh of HKDF-SHA256
_N_KEY = 32         # Nk of AES-256-GCM
_N_NONCE = 12       # Nn of AES-256-GCM
_MODE_BASE = b'\x00'


def _extract(suite_id, salt, label, ikm):
    """LabeledExtract: HKDF-Extract(salt, "HPKE-v1" || suite_id || label || ikm)."""
    return hmac.new(salt or b'\x00' * _N_SECRET, b'HPKE-v1' + suite_id + label + ikm,
                    hashlib.sha256).digest()


def _expand(suite_id, prk, label, info, length):
    """LabeledExpand: HKDF-Expand(prk, I2OSP(L,2) || "HPKE-v1" || suite_id || label || info, L)."""
    labeled = length.to_bytes(2, 'big') + b'HPKE-v1' + suite_id + label + info
    return hkdf.HKDFExpand(hashes.SHA256(), length, labeled).derive(prk)


def _shared_secret(dh, enc, recipient_public):
    """DHKEM ExtractAndExpand, kem_context = enc || pkRm."""
    prk = _extract(_KEM_SUITE, b'', b'eae_prk', dh)
    return _expand(_KEM_SUITE, prk, b'shared_secret', enc + recipient_public, _N_SECRET)


class Suite:
    """``hpke.Suite`` for the one suite nova-drs uses; encrypt/decrypt as its."""

    def __init__(self, kem, kdf, aead_id):
        if (kem, kdf, aead_id) != (KEM.X25519, KDF.HKDF_SHA256, AEAD.AES_256_GCM):
            raise ValueError('hpke_compat implements only X25519/HKDF-SHA256/AES-256-GCM')
        self._suite_id = b'HPKE' + b''.join(
            value.to_bytes(2, 'big') for value in (kem, kdf, aead_id))

    def _key_schedule(self, shared_secret, info):
        """Base-mode KeySchedule: the AEAD key and the nonce of message 0."""
        psk_id_hash = _extract(self._suite_id, b'', b'psk_id_hash', b'')
        info_hash = _extract(self._suite_id, b'', b'info_hash', info or b'')
        context = _MODE_BASE + psk_id_hash + info_hash
        secret = _extract(self._suite_id, shared_secret, b'secret', b'')
        return (_expand(self._suite_id, secret, b'key', context, _N_KEY),
                _expand(self._suite_id, secret, b'base_nonce', context, _N_NONCE))

    def encrypt(self, plaintext, public_key, info=None, _ephemeral=None):
        """``enc || AES-256-GCM ciphertext``; ``_ephemeral`` fixes skE for test vectors."""
        ephemeral = _ephemeral or x25519.X25519PrivateKey.generate()
        enc = ephemeral.public_key().public_bytes(*_RAW)
        shared = _shared_secret(ephemeral.exchange(public_key), enc,
                                public_key.public_bytes(*_RAW))
        key, nonce = self._key_schedule(shared, info)
        return enc + aead.AESGCM(key).encrypt(nonce, plaintext, b'')

    def decrypt(self, ciphertext, private_key, info=None):
        """The plaintext; InvalidTag when the key, the info or the bytes differ."""
        enc, sealed = ciphertext[:_N_SECRET], ciphertext[_N_SECRET:]
        sender = x25519.X25519PublicKey.from_public_bytes(enc)
        shared = _shared_secret(private_key.exchange(sender), enc,
                                private_key.public_key().public_bytes(*_RAW))
        key, nonce = self._key_schedule(shared, info)
        return aead.AESGCM(key).decrypt(nonce, sealed, b'')
