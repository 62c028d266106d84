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

"""Power drivers against real protocol peers on loopback (no mocks).

WoL: a UDP socket; IPMI: pyghmi's BMC server; Redfish: the sushy-tools
emulator (fake system driver); SSH: a private OpenSSH server. Peers are in
tests/peers.py; each is stopped by PID when its test ends. The drivers'
tests that need no peer process are in
tests/unit/power/test_drivers_on_loopback.py.
"""

import base64
import getpass
import json
import logging
import os
import subprocess
import time
import urllib.request

import pytest

from nova_drs import exception
from nova_drs.power import base
from nova_drs.power import loader
from tests import peers
from tests.unit.power import test_drivers_on_loopback as on_loopback
from tests.unit.power.test_drivers_on_loopback import MAC
from tests.unit.power.test_drivers_on_loopback import MAGIC

udp_listener = on_loopback.udp_listener


def wait_for_status(driver, target, expected, timeout=25):
    """Poll status() like the daemon does; the emulator applies power changes late."""
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = driver.status(target)
        if state == expected:
            return state
        time.sleep(0.5)
    raise AssertionError('status stayed %r, expected %r' % (state, expected))


@pytest.fixture
def bmc(tmp_path):
    peer = peers.start_ipmi_bmc(str(tmp_path), 'admin', 'ipmi-S3cret', watts=187)
    yield peer
    peer.stop()


@pytest.fixture
def redfish(tmp_path):
    peer = peers.start_redfish_emulator(str(tmp_path), 'admin', 'rf-S3cret', watts=212.5)
    yield peer
    peer.stop()


@pytest.fixture
def sshd(tmp_path):
    peer = peers.start_sshd(str(tmp_path))
    yield peer
    peer.stop()


# --- Wake-on-LAN ------------------------------------------------------------

def test_wol_suspends_via_ipmi_and_wakes_by_packet(conf, udp_listener, bmc):
    target = base.PowerTarget('host1', mac=MAC, options={
        'broadcast': '127.0.0.1', 'port': udp_listener.port, 'suspend_via': 'ipmi',
        'suspend_options': {'address': '127.0.0.1', 'port': bmc.port,
                            'username': 'admin', 'password': 'ipmi-S3cret'}})
    driver = loader.get_driver('wol', conf)
    driver.suspend(target)
    assert peers.read_bmc_state(bmc) == 'off'
    assert driver.status(target) == base.OFF
    driver.wake(target)
    assert udp_listener.receive() == MAGIC


# --- IPMI -------------------------------------------------------------------

def ipmi_target(bmc, password='ipmi-S3cret', mode=base.MODE_OFF):
    return base.PowerTarget('host1', mode=mode, options={
        'address': '127.0.0.1', 'port': bmc.port, 'username': 'admin', 'password': password})


def test_ipmi_soft_off_then_power_on(conf, bmc):
    driver, target = loader.get_driver('ipmi', conf), ipmi_target(bmc)
    assert driver.status(target) == base.ON
    driver.suspend(target)
    assert peers.read_bmc_state(bmc) == 'off'
    assert driver.status(target) == base.OFF
    driver.suspend(target)  # already off: nothing to do, no error
    driver.wake(target)
    assert peers.read_bmc_state(bmc) == 'on'
    assert driver.status(target) == base.ON


def test_ipmi_reads_dcmi_power_reading(conf, bmc):
    driver, target = loader.get_driver('ipmi', conf), ipmi_target(bmc)
    assert driver.MEASURES
    assert driver.power_watts(target) == 187.0
    driver.suspend(target)
    assert driver.power_watts(target) == 0.0


def test_ipmi_bmc_without_dcmi_has_no_figure(conf, tmp_path):
    peer = peers.start_ipmi_bmc(str(tmp_path), 'admin', 'ipmi-S3cret')
    try:
        assert loader.get_driver('ipmi', conf).power_watts(ipmi_target(peer)) is None
    finally:
        peer.stop()


def test_ipmi_wrong_password_fails_without_echoing_it(conf, bmc):
    with pytest.raises(exception.PowerError) as raised:
        loader.get_driver('ipmi', conf).suspend(ipmi_target(bmc, password='Wr0ng-pass'))
    message = str(raised.value)
    assert 'Incorrect password' in message and 'host1' in message
    assert 'Wr0ng-pass' not in message
    assert peers.read_bmc_state(bmc) == 'on'


def test_ipmi_refuses_s3_mode(conf, bmc):
    with pytest.raises(exception.PowerError, match="cannot suspend in mode 's3'"):
        loader.get_driver('ipmi', conf).suspend(ipmi_target(bmc, mode=base.MODE_S3))
    assert peers.read_bmc_state(bmc) == 'on'


# --- Redfish ----------------------------------------------------------------

def redfish_target(peer, password='rf-S3cret', mode=base.MODE_OFF, **extra):
    options = {'url': peer.url, 'username': 'admin', 'password': password,
               'system_id': peer.system_id}
    options.update(extra)
    return base.PowerTarget('host1', mode=mode, options=options)


def emulator_power_state(peer):
    """PowerState read straight from the emulator's REST API, not through sushy."""
    request = urllib.request.Request(
        '%s/redfish/v1/Systems/%s' % (peer.url, peer.system_id),
        headers={'Authorization': 'Basic ' + base64.b64encode(b'admin:rf-S3cret').decode()})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)['PowerState']


def test_redfish_graceful_shutdown_then_on(conf, redfish):
    driver, target = loader.get_driver('redfish', conf), redfish_target(redfish)
    assert driver.status(target) == base.ON
    driver.suspend(target)
    wait_for_status(driver, target, base.OFF)
    assert emulator_power_state(redfish) == 'Off'
    driver.wake(target)
    wait_for_status(driver, target, base.ON)
    assert emulator_power_state(redfish) == 'On'


def test_a_working_redfish_bmc_logs_no_error(conf, redfish, caplog):
    """The emulator has no SessionService: no session attempt, so no ERROR."""
    driver, target = loader.get_driver('redfish', conf), redfish_target(redfish)
    with caplog.at_level(logging.DEBUG, logger='sushy'):
        assert driver.status(target) == base.ON
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_redfish_s3_needs_advertised_suspend(conf, redfish):
    target = redfish_target(redfish, mode=base.MODE_S3)
    with pytest.raises(exception.PowerError, match='does not offer Suspend'):
        loader.get_driver('redfish', conf).suspend(target)
    assert emulator_power_state(redfish) == 'On'


def test_redfish_wrong_password_fails_without_echoing_it(conf, redfish):
    with pytest.raises(exception.PowerError) as raised:
        loader.get_driver('redfish', conf).status(redfish_target(redfish, password='Wr0ng-pass'))
    message = str(raised.value)
    assert '401' in message and 'Wr0ng-pass' not in message


def test_redfish_unknown_system_is_a_clear_error(conf, redfish):
    target = redfish_target(redfish, system_id='no-such-system')
    with pytest.raises(exception.PowerError, match='status of host host1 via redfish failed'):
        loader.get_driver('redfish', conf).status(target)


def test_redfish_reads_power_consumed_watts_and_follows_power(conf, redfish):
    driver, target = loader.get_driver('redfish', conf), redfish_target(redfish)
    assert driver.MEASURES
    assert driver.power_watts(target) == 212.5
    driver.suspend(target)
    wait_for_status(driver, target, base.OFF)
    assert driver.power_watts(target) == 0.0


def test_redfish_without_power_resource_reads_nothing(conf, tmp_path):
    peer = peers.start_redfish_emulator(str(tmp_path), 'admin', 'rf-S3cret')
    try:
        driver = loader.get_driver('redfish', conf)
        assert driver.power_watts(redfish_target(peer)) is None
    finally:
        peer.stop()


def test_power_reading_failure_names_host_without_secret(conf, redfish):
    with pytest.raises(exception.PowerError) as raised:
        loader.get_driver('redfish', conf).power_watts(
            redfish_target(redfish, password='Wr0ng-pass'))
    message = str(raised.value)
    assert 'power reading of host host1 via redfish failed' in message
    assert 'Wr0ng-pass' not in message


# --- SSH --------------------------------------------------------------------

def ssh_target(peer, tmp_path, known_hosts_text=None, **extra):
    known_hosts = tmp_path / 'known_hosts'
    if known_hosts_text is None:
        known_hosts_text = peer.known_hosts_line + '\n'
    known_hosts.write_text(known_hosts_text)
    options = {'address': '127.0.0.1', 'port': peer.port, 'username': getpass.getuser(),
               'private_key_file': peer.client_key, 'known_hosts_file': str(known_hosts),
               'suspend_command': 'touch %s' % (tmp_path / 'suspended-marker')}
    options.update(extra)
    return base.PowerTarget('host1', mode=base.MODE_S3, options=options)


def test_ssh_runs_suspend_command(conf, sshd, tmp_path):
    driver, target = loader.get_driver('ssh', conf), ssh_target(sshd, tmp_path)
    assert driver.status(target) == base.ON
    driver.suspend(target)
    assert (tmp_path / 'suspended-marker').exists()


def test_ssh_status_command_decides_on(conf, sshd, tmp_path):
    driver = loader.get_driver('ssh', conf)
    assert driver.status(ssh_target(sshd, tmp_path, status_command='true')) == base.ON
    assert driver.status(ssh_target(sshd, tmp_path, status_command='false')) == base.UNKNOWN


def test_ssh_failing_suspend_command_reports_status_and_stderr(conf, sshd, tmp_path):
    target = ssh_target(sshd, tmp_path, suspend_command='echo no-sleep-here >&2; exit 3')
    with pytest.raises(exception.PowerError, match='status 3: no-sleep-here'):
        loader.get_driver('ssh', conf).suspend(target)


def test_ssh_rejects_unknown_host_key(conf, sshd, tmp_path):
    target = ssh_target(sshd, tmp_path, known_hosts_text='')
    with pytest.raises(exception.PowerError, match='not found in known_hosts'):
        loader.get_driver('ssh', conf).suspend(target)
    assert not (tmp_path / 'suspended-marker').exists()


def test_ssh_rejects_changed_host_key(conf, sshd, tmp_path):
    other_key = peers._keygen(str(tmp_path / 'other_host_key')).split()
    line = '[127.0.0.1]:%d %s %s\n' % (sshd.port, other_key[0], other_key[1])
    with pytest.raises(exception.PowerError, match='does not match known_hosts'):
        loader.get_driver('ssh', conf).suspend(ssh_target(sshd, tmp_path, line))
    assert not (tmp_path / 'suspended-marker').exists()


def test_ssh_auto_add_trusts_first_use_and_saves_key(conf, sshd, tmp_path):
    target = ssh_target(sshd, tmp_path, host_key_policy='auto_add')
    os.unlink(target.options['known_hosts_file'])
    loader.get_driver('ssh', conf).suspend(target)
    assert (tmp_path / 'suspended-marker').exists()
    saved = (tmp_path / 'known_hosts').read_text()
    assert sshd.known_hosts_line.split()[2] in saved


def test_ssh_unauthorised_key_is_rejected(conf, sshd, tmp_path):
    stranger = tmp_path / 'stranger_key'
    peers._keygen(str(stranger))
    target = ssh_target(sshd, tmp_path, private_key_file=str(stranger))
    with pytest.raises(exception.PowerError, match='key authentication as'):
        loader.get_driver('ssh', conf).suspend(target)
    assert not (tmp_path / 'suspended-marker').exists()


def test_ssh_passphrase_protected_key(conf, sshd, tmp_path):
    protected = tmp_path / 'protected_key'
    subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', 'Pa55-phrase', '-f',
                    str(protected)], check=True)
    with open(sshd.authorized_keys, 'a') as authorized:
        authorized.write((tmp_path / 'protected_key.pub').read_text())
    driver = loader.get_driver('ssh', conf)
    wrong = ssh_target(sshd, tmp_path, private_key_file=str(protected),
                       passphrase='Wr0ng-phrase')
    with pytest.raises(exception.PowerError, match='cannot load private key') as raised:
        driver.suspend(wrong)
    assert 'Wr0ng-phrase' not in str(raised.value)
    assert not (tmp_path / 'suspended-marker').exists()
    driver.suspend(ssh_target(sshd, tmp_path, private_key_file=str(protected),
                              passphrase='Pa55-phrase'))
    assert (tmp_path / 'suspended-marker').exists()


def test_ssh_unreachable_host_is_unknown_not_off(conf, sshd, tmp_path):
    target = ssh_target(sshd, tmp_path, port=peers.free_port())
    assert loader.get_driver('ssh', conf).status(target) == base.UNKNOWN
