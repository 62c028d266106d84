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

"""Pure-code checks: option validation, redaction, loader errors, PowerTarget."""

import json

from oslo_config import cfg
import pytest
import sushy

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.db import models
from nova_drs.power import base
from nova_drs.power import loader
from nova_drs.power import wol

IPMI = {'address': '10.0.0.5', 'username': 'admin', 'password': 'Top-S3cret'}
SSH = {'username': 'root', 'private_key_file': '/etc/nova-drs/id_ed25519',
       'passphrase': 'Phrase-S3cret'}


class FailingDriver(base.PowerDriver):
    """Raises a library-style error quoting the password, as some libraries do."""

    NAME = 'failing'
    OPTIONS = {'type': 'object', 'properties': {'password': {'type': 'string',
                                                             'secret': True}}}

    def _suspend(self, target):
        raise RuntimeError('login with %s refused' % target.options['password'])

    def _wake(self, target):
        raise OSError()

    def _status(self, target):
        return 'sleeping'


# --- loader -----------------------------------------------------------------

def test_all_drivers_are_registered():
    assert loader.names() == ['ipmi', 'noop', 'redfish', 'ssh', 'wol']


def test_unknown_driver_names_the_choices(conf):
    with pytest.raises(exception.PowerError) as raised:
        loader.get_driver('etherwake', conf)
    assert str(raised.value) == ("unknown power driver 'etherwake' "
                                 "(available: ipmi, noop, redfish, ssh, wol)")


@pytest.mark.parametrize('name', [None, ''])
def test_missing_driver_name(name):
    with pytest.raises(exception.PowerError, match='no power driver is set'):
        loader.driver_class(name)


def test_get_driver_passes_conf(conf):
    assert loader.get_driver('noop', conf).conf is conf


# --- option validation ------------------------------------------------------

def test_valid_settings_pass():
    loader.check('ipmi', 'off', IPMI)
    loader.check('ssh', 's3', SSH)
    loader.check('redfish', 's3', {'url': 'https://bmc.example', 'verify': '/etc/ca.pem'})
    loader.check('wol', 's3', {'suspend_via': 'ssh', 'suspend_options': SSH})
    loader.check('noop', 's3', {})


def test_missing_and_unexpected_options_are_named():
    with pytest.raises(exception.PowerError) as raised:
        loader.check('ipmi', 'off', {'address': 'bmc', 'user': 'admin'})
    message = str(raised.value)
    assert "'username' is a required property" in message
    assert "'password' is a required property" in message
    assert "'user' was unexpected" in message


def test_wrongly_typed_secret_is_not_echoed():
    with pytest.raises(exception.PowerError) as raised:
        loader.check('ipmi', 'off', dict(IPMI, password=987654321))
    assert str(raised.value) == "invalid power options: option 'password' must be of type string"


def test_out_of_range_and_enum_messages():
    with pytest.raises(exception.PowerError, match="option 'port' must be <= 65535"):
        loader.check('ssh', 'off', dict(SSH, port=70000))
    with pytest.raises(exception.PowerError,
                       match="'host_key_policy' must be one of reject, auto_add"):
        loader.check('ssh', 'off', dict(SSH, host_key_policy='ignore'))


def test_options_must_be_an_object():
    with pytest.raises(exception.PowerError, match='must be a JSON object'):
        loader.check('noop', 'off', ['a'])


def test_mode_the_driver_cannot_do():
    with pytest.raises(exception.PowerError,
                       match=r"ipmi cannot suspend in mode 's3' \(supports: off\)"):
        loader.check('ipmi', 's3', IPMI)


def test_redfish_url_with_credentials_is_refused():
    with pytest.raises(exception.PowerError) as raised:
        loader.check('redfish', 'off', {'url': 'https://admin:Top-S3cret@bmc'})
    assert 'Top-S3cret' not in str(raised.value)


def test_wol_checks_the_suspend_driver_options():
    with pytest.raises(exception.PowerError, match="'username' is a required property"):
        loader.check('wol', 'off', {'suspend_via': 'ssh', 'suspend_options': {}})
    with pytest.raises(exception.PowerError, match="unknown power driver 'acpi'"):
        loader.check('wol', 'off', {'suspend_via': 'acpi'})
    with pytest.raises(exception.PowerError, match='suspend_via cannot be wol'):
        loader.check('wol', 'off', {'suspend_via': 'wol'})
    with pytest.raises(exception.PowerError, match='cannot suspend in mode'):
        loader.check('wol', 's3', {'suspend_via': 'ipmi', 'suspend_options': IPMI})


def test_capabilities():
    assert loader.driver_class('ssh').can_wake(SSH) is False
    assert loader.driver_class('wol').can_suspend({}) is False
    assert loader.driver_class('wol').can_suspend({'suspend_via': 'ssh'}) is True
    assert loader.driver_class('ipmi').can_suspend(IPMI) is True


# --- redaction --------------------------------------------------------------

def test_redact_uses_the_driver_schema_and_keeps_other_values():
    shown = loader.redact(dict(IPMI, kg='K3y'), 'ipmi')
    assert shown == {'address': '10.0.0.5', 'username': 'admin', 'password': '***', 'kg': '***'}
    assert IPMI['password'] == 'Top-S3cret'  # the input is not modified


def test_redact_nested_suspend_options():
    options = {'port': 9, 'suspend_via': 'ipmi', 'suspend_options': IPMI}
    shown = loader.redact(options, 'wol')
    assert shown['suspend_options']['password'] == '***'
    assert shown['port'] == 9
    assert 'Top-S3cret' not in json.dumps(shown)


def test_redact_without_schema_hides_password_like_keys():
    shown = base.redact({'bmc_password': 'a', 'api_token': 'b', 'private_key_file': '/k',
                         'nested': {'secret': 'c'}, 'user': 'd'})
    assert shown == {'bmc_password': '***', 'api_token': '***', 'private_key_file': '/k',
                     'nested': {'secret': '***'}, 'user': 'd'}
    assert loader.redact({'password': 'x'}, 'no-such-driver') == {'password': '***'}


# --- PowerTarget ------------------------------------------------------------

def test_target_from_host_row():
    row = models.DrsHost(host='cmp1', mac_to_wake='52:54:00:ab:cd:01', power_driver='ipmi',
                         power_mode=None, power_options=json.dumps(IPMI))
    target = base.PowerTarget.from_host(row)
    assert (target.name, target.mac, target.mode, target.options) == (
        'cmp1', '52:54:00:ab:cd:01', 'off', IPMI)
    assert 'Top-S3cret' not in repr(target)


def test_target_from_mapping_and_bad_json_is_not_quoted():
    assert base.PowerTarget.from_host({'host': 'cmp1', 'power_mode': 's3'}).mode == 's3'
    with pytest.raises(exception.PowerError) as raised:
        base.PowerTarget.from_host({'host': 'cmp1', 'power_options': '{"password": "Top-S3'})
    assert str(raised.value) == 'power options of host cmp1 are not valid JSON'
    with pytest.raises(exception.PowerError, match='must be a JSON object'):
        base.PowerTarget.from_host({'host': 'cmp1', 'power_options': '[1]'})


def test_target_mode_is_checked():
    with pytest.raises(exception.PowerError, match="must be one of s3, off, not 'hibernate'"):
        base.PowerTarget('cmp1', mode='hibernate')


# --- driver errors ----------------------------------------------------------

def test_library_errors_become_power_errors_without_secrets(conf):
    driver = FailingDriver(conf)
    target = base.PowerTarget('cmp1', options={'password': 'Top-S3cret'})
    with pytest.raises(exception.PowerError) as raised:
        driver.suspend(target)
    assert str(raised.value) == 'suspend of host cmp1 via failing failed: login with *** refused'
    with pytest.raises(exception.PowerError,
                       match='wake of host cmp1 via failing failed: OSError'):
        driver.wake(target)
    with pytest.raises(exception.PowerError, match="driver returned 'sleeping'"):
        driver.status(target)


def test_invalid_stored_options_fail_before_any_action(conf):
    target = base.PowerTarget('cmp1', options={'address': 'bmc'})
    with pytest.raises(exception.PowerError, match="status of host cmp1 via ipmi failed: invalid"):
        loader.get_driver('ipmi', conf).status(target)


def test_ssh_cannot_wake(conf):
    with pytest.raises(exception.PowerError, match='use the wol driver with suspend_via ssh'):
        loader.get_driver('ssh', conf).wake(base.PowerTarget('cmp1', options=SSH))


def test_wol_without_suspend_driver_is_wake_only(conf):
    driver = loader.get_driver('wol', conf)
    target = base.PowerTarget('cmp1', mac='52:54:00:ab:cd:01')
    with pytest.raises(exception.PowerError, match='wol can only wake; set suspend_via'):
        driver.suspend(target)
    assert driver.status(target) == base.UNKNOWN


def test_noop_changes_nothing(conf):
    driver = loader.get_driver('noop', conf)
    target = base.PowerTarget('cmp1', mode='s3')
    driver.suspend(target)
    driver.wake(target)
    assert driver.status(target) == base.UNKNOWN


@pytest.mark.parametrize('mac, expected', [
    ('52:54:00:AB:CD:01', '52:54:00:ab:cd:01'),
    ('52-54-00-ab-cd-01', '52:54:00:ab:cd:01'),
    ('525400abcd01', '52:54:00:ab:cd:01'),
])
def test_mac_forms(mac, expected):
    assert wol.normalise_mac(mac, 'cmp1') == expected


@pytest.mark.parametrize('mac', [None, '', '52:54:00:ab:cd', '52:54-00:ab:cd:01',
                                 'zz:54:00:ab:cd:01', '52:54:00:ab:cd:01:02'])
def test_bad_macs(mac):
    with pytest.raises(exception.PowerError, match='no valid MAC'):
        wol.normalise_mac(mac, 'cmp1')


# --- configuration ----------------------------------------------------------

def test_bad_drs_power_value_in_nova_conf_is_a_config_error(tmp_path):
    config_file = tmp_path / 'nova.conf'
    config_file.write_text('[drs_power]\ntimeout = 0\nwol_port = 9\n')
    config = cfg.ConfigOpts()
    drs_conf.register_opts(config)
    config(['--config-file', str(config_file)], project='nova-drs-test')
    with pytest.raises(exception.ConfigError, match=r'\[drs_power\] timeout'):
        drs_conf.validate(config)


# --- redfish reset choice (the emulator offers neither Suspend nor Pause) ---

class StubSystem:
    """Just enough of sushy's System for the driver's choice of reset type."""

    def __init__(self, power_state, allowed, reject=()):
        self.power_state = power_state
        self.json = {'Actions': {'#ComputerSystem.Reset': {}}}
        if allowed is not None:
            self.json['Actions']['#ComputerSystem.Reset'][
                'ResetType@Redfish.AllowableValues'] = allowed
        self.reject = reject
        self.resets = []

    def reset_system(self, value):
        if value.value in self.reject:
            raise sushy.exceptions.BadRequestError('POST', '/reset', _Response())
        self.resets.append(value.value)


class _Response:
    status_code = 400
    text = ''

    def json(self):
        return {}


def redfish_with(monkeypatch, conf, system):
    driver = loader.get_driver('redfish', conf)
    monkeypatch.setattr(driver, '_system', lambda target: system)
    return driver


@pytest.mark.parametrize('mode, state, allowed, reject, fallback, expected', [
    ('s3', sushy.PowerState.ON, ['On', 'Suspend'], (), False, ['Suspend']),
    ('off', sushy.PowerState.ON, ['On', 'GracefulShutdown'], (), False, ['GracefulShutdown']),
    ('off', sushy.PowerState.ON, None, (), False, ['GracefulShutdown']),
    ('off', sushy.PowerState.ON, ['On', 'GracefulShutdown', 'ForceOff'],
     ('GracefulShutdown',), True, ['ForceOff']),
    ('off', sushy.PowerState.ON, ['On', 'ForceOff'], (), True, ['ForceOff']),
    ('off', sushy.PowerState.OFF, ['On', 'GracefulShutdown'], (), False, []),
])
def test_redfish_suspend_reset_choice(monkeypatch, conf, mode, state, allowed, reject,
                                      fallback, expected):
    system = StubSystem(state, allowed, reject)
    target = base.PowerTarget('cmp1', mode=mode, options={'url': 'https://bmc',
                                                          'force_off_fallback': fallback})
    redfish_with(monkeypatch, conf, system).suspend(target)
    assert system.resets == expected


@pytest.mark.parametrize('allowed, reject, match', [
    (['On', 'ForceOff'], (), 'does not offer GracefulShutdown'),
    (['On', 'GracefulShutdown'], ('GracefulShutdown',), 'HTTP POST /reset returned code 400'),
])
def test_redfish_suspend_without_fallback_fails(monkeypatch, conf, allowed, reject, match):
    system = StubSystem(sushy.PowerState.ON, allowed, reject)
    target = base.PowerTarget('cmp1', options={'url': 'https://bmc'})
    with pytest.raises(exception.PowerError, match=match):
        redfish_with(monkeypatch, conf, system).suspend(target)
    assert system.resets == []


@pytest.mark.parametrize('state, allowed, expected', [
    (sushy.PowerState.PAUSED, ['On', 'Resume'], ['Resume']),
    (sushy.PowerState.PAUSED, ['On'], ['On']),
    (sushy.PowerState.OFF, ['On', 'Resume'], ['On']),
    (sushy.PowerState.ON, ['On'], []),
])
def test_redfish_wake_reset_choice(monkeypatch, conf, state, allowed, expected):
    system = StubSystem(state, allowed)
    target = base.PowerTarget('cmp1', mode='s3', options={'url': 'https://bmc'})
    redfish_with(monkeypatch, conf, system).wake(target)
    assert system.resets == expected
