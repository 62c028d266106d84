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

"""Sealed power secrets: round trip, who can open them, and every way to fail clearly."""

import json
import os

import pytest

from nova_drs import exception
from nova_drs.power import base
from nova_drs.power import ipmi
from nova_drs.power import loader
from nova_drs.power import sealing
from nova_drs.power import wol

IPMI = {'address': '10.0.0.5', 'username': 'admin', 'password': 'Top-S3cret', 'kg': 'K3y'}


@pytest.fixture
def keys(tmp_path):
    """(Sealer, Unsealer, private path, public path) of a fresh key pair."""
    private, public = str(tmp_path / 'seal.key'), str(tmp_path / 'seal.pub')
    sealing.generate_key_pair(private, public)
    return (sealing.Sealer.from_file(public), sealing.Unsealer.from_files([private]),
            private, public)


def _seal(options, sealer, host='cmp1', schema=ipmi.IpmiDriver.OPTIONS):
    return sealing.seal_options(options, schema, host, sealer)


def test_round_trip_keeps_plain_options_and_hides_secrets(keys):
    sealer, unsealer, _, _ = keys
    sealed = _seal(IPMI, sealer)
    assert sealed['address'] == '10.0.0.5' and sealed['username'] == 'admin'
    stored = json.dumps(sealed)
    assert 'Top-S3cret' not in stored and 'K3y' not in stored
    assert sealing.is_sealed(sealed['password']) and sealing.is_sealed(sealed['kg'])
    assert sealing.key_id_of(sealed['password']) == sealer.key_id
    assert sealing.unseal_options(sealed, 'cmp1', unsealer) == IPMI
    assert IPMI['password'] == 'Top-S3cret'  # input not modified


def test_each_seal_differs_and_already_sealed_values_are_kept(keys):
    sealer, unsealer, _, _ = keys
    first, second = _seal(IPMI, sealer), _seal(IPMI, sealer)
    assert first['password'] != second['password']
    assert _seal(first, sealer) == first


def test_public_key_side_cannot_unseal(keys):
    """What an API node holds (the public key file) opens nothing."""
    sealer, _, _, public = keys
    sealed = _seal(IPMI, sealer)
    os.chmod(public, 0o600)
    with pytest.raises(exception.SealError, match='not an unencrypted X25519 private key'):
        sealing.Unsealer.from_files([public])
    with pytest.raises(exception.SealError) as raised:
        sealing.unseal_options(sealed, 'cmp1', sealing.Unsealer())
    assert str(raised.value) == (
        "power option 'password' of host cmp1 is sealed for key %s, which is not among "
        "[drs_power] unseal_private_key_files (none set)" % sealer.key_id)


def test_wrong_private_key_names_both_keys(keys, tmp_path):
    sealer, _, _, _ = keys
    other = str(tmp_path / 'other.key')
    other_id = sealing.generate_key_pair(other, str(tmp_path / 'other.pub'))
    with pytest.raises(exception.SealError, match='sealed for key %s, which is not among '
                       r'\[drs_power\] unseal_private_key_files \(%s\)'
                       % (sealer.key_id, other_id)):
        sealing.unseal_options(_seal(IPMI, sealer), 'cmp1',
                               sealing.Unsealer.from_files([other]))


@pytest.mark.parametrize('change', ['tamper', 'other_host', 'other_address', 'moved'])
def test_tampered_or_moved_ciphertext_does_not_open(keys, change):
    """Someone with database write access can neither alter a sealed secret nor
    point it at another host or BMC address."""
    sealer, unsealer, _, _ = keys
    sealed = _seal(IPMI, sealer)
    host = 'cmp1'
    if change == 'tamper':
        token = sealed['password']
        sealed['password'] = token[:-6] + ('A' if token[-6] != 'A' else 'B') + token[-5:]
    elif change == 'other_host':
        host = 'cmp2'
    elif change == 'other_address':
        sealed['address'] = '203.0.113.9'
    else:
        sealed['kg'] = sealed['password']
    with pytest.raises(exception.SealError, match='does not unseal with key %s: tampered with, '
                       'or sealed for another host or other options; set it again'
                       % sealer.key_id) as raised:
        sealing.unseal_options(sealed, host, unsealer)
    assert 'Top-S3cret' not in str(raised.value)


def test_no_public_key_refuses_a_secret_naming_it():
    with pytest.raises(exception.SealError, match="power option 'password' is secret and no "
                       r"\[drs_power\] seal_public_key_file is set"):
        _seal(IPMI, None)
    # Nothing secret: nothing to seal, no key needed.
    assert _seal({'address': 'a'}, None, schema=ipmi.IpmiDriver.OPTIONS) == {'address': 'a'}


def test_wol_seals_the_suspend_via_drivers_secrets(keys):
    sealer, unsealer, _, _ = keys
    options = {'suspend_via': 'ipmi', 'suspend_options': dict(IPMI)}
    sealed = sealing.seal_options(options, wol.WakeOnLanDriver.schema_for(options), 'cmp1',
                                  sealer)
    assert sealing.is_sealed(sealed['suspend_options']['password'])
    assert sealed['suspend_options']['username'] == 'admin'
    assert sealing.unseal_options(sealed, 'cmp1', unsealer) == options


def test_schema_is_the_one_owner_of_secrets():
    """A schema property is secret only when marked; every installed driver marks
    every option named like a password (so the name is never what protects it)."""
    schema = {'properties': {'password_file': {'type': 'string'},
                             'passcode': {'type': 'string', 'secret': True}}}
    assert base.is_secret('passcode', schema) and not base.is_secret('password_file', schema)
    assert base.is_secret('bmc_password', None)  # undescribed: judged by name
    for name in loader.names():
        properties = loader.driver_class(name).OPTIONS.get('properties', {})
        for key, prop in properties.items():
            if base._looks_secret(key):
                assert prop.get('secret') is True, '%s option %s' % (name, key)


def test_key_files_refused_in_one_line(keys, tmp_path):
    _, _, private, public = keys
    os.chmod(private, 0o640)
    with pytest.raises(exception.SealError, match=r'readable by group or others \(mode 0640\); '
                       'chmod 600 it'):
        sealing.Unsealer.from_files([private])
    with pytest.raises(exception.SealError, match='is not an X25519 public key in PEM'):
        sealing.Sealer.from_file(private)
    with pytest.raises(exception.SealError, match='cannot read public key /no/such.pub'):
        sealing.Sealer.from_file('/no/such.pub')
    with pytest.raises(exception.SealError, match='already exists; not overwriting'):
        sealing.generate_key_pair(private, str(tmp_path / 'new.pub'))
    assert os.stat(str(tmp_path / 'seal.key')).st_mode & 0o777 == 0o640


def test_nested_options_whatever_their_names_are_opened(keys):
    """A nested dict the schema does not mark secret is sealed inside, and opened
    inside, even when its name looks like a password's."""
    sealer, unsealer, _, _ = keys
    schema = {'properties': {'secret_settings': {'type': 'object', 'secret': False,
                                                 'properties': {'token': {'secret': True}}}}}
    options = {'secret_settings': {'token': 'T0ken', 'user': 'u'}}
    sealed = sealing.seal_options(options, schema, 'cmp1', sealer)
    assert sealing.is_sealed(sealed['secret_settings']['token'])
    assert sealing.sealed_key_ids(sealed) == {sealer.key_id}
    assert sealing.unseal_options(sealed, 'cmp1', unsealer) == options
