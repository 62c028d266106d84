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

"""Power drivers on loopback without a peer process (no mocks).

WoL: the magic packet on a UDP socket; IPMI: a port nobody answers. The
drivers against the BMC simulators and sshd are in
tests/component/power/test_drivers_on_peers.py.
"""

import socket

import pytest

from nova_drs import exception
from nova_drs.power import base
from nova_drs.power import loader
from tests import peers

MAC = '52-54-00-AB-cd-01'
MAGIC = b'\xff' * 6 + bytes.fromhex('525400abcd01') * 16


@pytest.fixture
def udp_listener():
    listener = peers.UdpListener()
    yield listener
    listener.close()


# --- Wake-on-LAN ------------------------------------------------------------

def test_wol_sends_magic_packet_to_configured_address(conf, udp_listener):
    target = base.PowerTarget('host1', mac=MAC,
                              options={'broadcast': '127.0.0.1', 'port': udp_listener.port})
    loader.get_driver('wol', conf).wake(target)
    assert udp_listener.receive() == MAGIC


def test_wol_uses_drs_power_defaults(conf, udp_listener):
    conf.set_override('wol_broadcast_address', '127.0.0.1', group='drs_power')
    conf.set_override('wol_port', udp_listener.port, group='drs_power')
    loader.get_driver('wol', conf).wake(base.PowerTarget('host1', mac='525400abcd01'))
    assert udp_listener.receive() == MAGIC


def test_wol_invalid_mac_sends_nothing(conf, udp_listener):
    target = base.PowerTarget('host1', mac='52:54:00:ab:cd',
                              options={'broadcast': '127.0.0.1', 'port': udp_listener.port})
    with pytest.raises(exception.PowerError, match='no valid MAC'):
        loader.get_driver('wol', conf).wake(target)
    with pytest.raises(socket.timeout):
        udp_listener.receive(timeout=0.5)


# --- IPMI -------------------------------------------------------------------

def test_drivers_that_cannot_measure_say_so(conf):
    assert loader.measuring() == ['ipmi', 'redfish']
    target = base.PowerTarget('host1', mac=MAC, options={})
    assert loader.get_driver('wol', conf).power_watts(target) is None


def test_ipmi_silent_bmc_is_a_clear_error(conf):
    target = base.PowerTarget('host1', options={
        'address': '127.0.0.1', 'port': peers.free_port(socket.SOCK_DGRAM),
        'username': 'admin', 'password': 'ipmi-S3cret'})
    with pytest.raises(exception.PowerError, match='no answer'):
        loader.get_driver('ipmi', conf).status(target)
