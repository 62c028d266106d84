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

"""MAC lookup of the interface carrying my_ip, and the wake_address plugin."""

import logging
import unittest

import netifaces

from nova_drs.resources import macaddr
from nova_drs.resources.plugins import wake_address

INTERFACES = {
    'lo': {netifaces.AF_INET: [{'addr': '127.0.0.1'}],
           netifaces.AF_LINK: [{'addr': '00:00:00:00:00:00'}]},
    'eth0': {netifaces.AF_INET: [{'addr': '10.0.0.5'}],
             netifaces.AF_INET6: [{'addr': 'fe80::1%eth0'}],
             netifaces.AF_LINK: [{'addr': '52:54:00:AB:CD:EF'}]},
    'tun0': {netifaces.AF_INET: [{'addr': '10.8.0.1'}]},
}


def lookup(ip):
    return macaddr.mac_for_ip(ip, interfaces=lambda: list(INTERFACES),
                              ifaddresses=INTERFACES.__getitem__)


class FakeConf:
    my_ip = None


class TestMacForIp(unittest.TestCase):

    def test_interface_with_ip(self):
        self.assertEqual(('eth0', '52:54:00:ab:cd:ef'), lookup('10.0.0.5'))

    def test_ipv6_with_scope(self):
        self.assertEqual(('eth0', '52:54:00:ab:cd:ef'), lookup('fe80::1'))

    def test_no_interface_has_ip(self):
        self.assertIsNone(lookup('192.0.2.99'))

    def test_interfaces_without_mac_do_not_match(self):
        self.assertIsNone(lookup('127.0.0.1'))
        self.assertIsNone(lookup('10.8.0.1'))


class TestWakeAddressPlugin(unittest.TestCase):

    def plugin(self, ip):
        conf = FakeConf()
        conf.my_ip = ip
        return wake_address.WakeAddress(lookup=lookup, conf=conf)

    def test_reports_mac(self):
        plugin = self.plugin('10.0.0.5')
        plugin.reset(None, None)
        self.assertEqual({'mac_to_wake': '52:54:00:ab:cd:ef'}, plugin.report())

    def test_missing_interface_logs_once_and_reports_nothing(self):
        plugin = self.plugin('192.0.2.99')
        with self.assertLogs(wake_address.LOG.logger, logging.ERROR) as logs:
            plugin.reset(None, None)
            plugin.reset(None, None)
        self.assertEqual(1, len(logs.records))
        self.assertIn('192.0.2.99', logs.output[0])
        self.assertIn('my_ip', logs.output[0])
        self.assertEqual({}, plugin.report())
