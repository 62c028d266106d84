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

"""nova_drs.power.hpke_compat: HPKE as ``cryptography`` >= 50 does it, on older releases."""

from cryptography import exceptions as crypto_exc
from cryptography.hazmat.primitives.asymmetric import x25519
import pytest

from nova_drs.power import hpke_compat

COMPAT = hpke_compat.Suite(hpke_compat.KEM.X25519, hpke_compat.KDF.HKDF_SHA256,
                           hpke_compat.AEAD.AES_256_GCM)
# Sealed by hpke_compat with skE = bytes(32..63) to skR = bytes(0..31) and
# checked to open with cryptography 50's hpke.Suite (the 2026.2 venv).
RECIPIENT = x25519.X25519PrivateKey.from_private_bytes(bytes(range(32)))
INFO = b'["host1","ipmi.password",{}]'
VECTOR = bytes.fromhex(
    '358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254'
    '3a4537710d0b27f0d859774004f47733708c57b336816455c9dd36e0')
CASES = [(info, plain) for info in (None, b'', INFO) for plain in (b'', b'pw', b'x' * 1000)]


def _real_suite():
    hpke = pytest.importorskip('cryptography.hazmat.primitives.hpke')
    return hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)


def test_fixed_vector_opens_on_every_release():
    assert COMPAT.decrypt(VECTOR, RECIPIENT, info=INFO) == b'bmc-password'


def test_fixed_vector_is_reproduced_from_the_fixed_ephemeral_key():
    ephemeral = x25519.X25519PrivateKey.from_private_bytes(bytes(range(32, 64)))
    assert COMPAT.encrypt(b'bmc-password', RECIPIENT.public_key(), info=INFO,
                          _ephemeral=ephemeral) == VECTOR


@pytest.mark.parametrize('info,plain', CASES)
def test_compat_sealed_opens_with_the_real_hpke(info, plain):
    key = x25519.X25519PrivateKey.generate()
    sealed = COMPAT.encrypt(plain, key.public_key(), info=info)
    assert _real_suite().decrypt(sealed, key, info=info) == plain


@pytest.mark.parametrize('info,plain', CASES)
def test_real_hpke_sealed_opens_with_compat(info, plain):
    key = x25519.X25519PrivateKey.generate()
    sealed = _real_suite().encrypt(plain, key.public_key(), info=info)
    assert COMPAT.decrypt(sealed, key, info=info) == plain


def test_other_key_other_info_or_changed_byte_do_not_open():
    sealed = bytearray(VECTOR)
    sealed[-1] ^= 1
    for ciphertext, key, info in ((VECTOR, x25519.X25519PrivateKey.generate(), INFO),
                                  (VECTOR, RECIPIENT, INFO + b' '),
                                  (bytes(sealed), RECIPIENT, INFO)):
        with pytest.raises(crypto_exc.InvalidTag):
            COMPAT.decrypt(ciphertext, key, info=info)


def test_each_seal_has_its_own_ephemeral_key():
    first = COMPAT.encrypt(b'pw', RECIPIENT.public_key())
    assert first[:32] != COMPAT.encrypt(b'pw', RECIPIENT.public_key())[:32]


def test_only_the_sealing_suite():
    with pytest.raises(ValueError):
        hpke_compat.Suite(hpke_compat.KEM.X25519, hpke_compat.KDF.HKDF_SHA256, 0x0001)
