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

"""set_power through nova-api's real pipeline: files only in [drs_power] files_dir."""

import json
import os

from nova_drs.db import models
from tests.functional import api_base


class TestPowerOptionPaths(api_base.DrsApiTestCase):

    def set_power(self, driver, options):
        return self.call(self.admin_api, 'POST', '/loadbalancer/action',
                         {'set_power': {'host': 'host2', 'driver': driver,
                                        'options': options}})

    def stored_options(self):
        with self.drs_db.reader() as session:
            row = session.query(models.DrsHost).filter_by(host='host2').one_or_none()
            return None if row is None else row.power_options

    def test_files_outside_files_dir_are_400_and_not_stored(self):
        files_dir = os.path.join(self.state_dir, 'power')
        os.makedirs(files_dir)
        os.symlink('/etc', os.path.join(files_dir, 'etc'))
        ssh = {'username': 'root'}
        cases = (
            ('ssh', dict(ssh, private_key_file='/etc/shadow'),
             'power option private_key_file=/etc/shadow resolves to /etc/shadow, outside '
             '[drs_power] files_dir %s' % files_dir),
            ('ssh', dict(ssh, known_hosts_file='../../root/.ssh/authorized_keys',
                         host_key_policy='auto_add'),
             'power option known_hosts_file=../../root/.ssh/authorized_keys: ".." is not '
             'allowed'),
            ('ssh', dict(ssh, private_key_file='etc/passwd'), 'outside [drs_power] files_dir'),
            ('wol', {'suspend_via': 'ssh',
                     'suspend_options': dict(ssh, known_hosts_file='/tmp/known_hosts')},
             'power option suspend_options.known_hosts_file=/tmp/known_hosts'),
            ('redfish', {'url': 'https://bmc', 'verify': '/etc/ssl/certs/ca.pem'},
             'power option verify=/etc/ssl/certs/ca.pem'),
        )
        for driver, options, fragment in cases:
            with self.subTest(driver=driver, options=options):
                self.assertFault(400, self.set_power(driver, options), fragment)
                self.assertIsNone(self.stored_options())

    def test_files_inside_are_stored(self):
        options = {'username': 'root', 'private_key_file': 'keys/host2',
                   'known_hosts_file': os.path.join(self.state_dir, 'power', 'known_hosts'),
                   'host_key_policy': 'auto_add'}
        status, body = self.set_power('ssh', options)
        self.assertEqual(200, status, body)
        self.assertEqual(options, json.loads(self.stored_options()))
        status, body = self.set_power('redfish', {'url': 'https://bmc', 'verify': 'false'})
        self.assertEqual(200, status, body)
