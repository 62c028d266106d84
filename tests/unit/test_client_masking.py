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

"""The clients' ``--debug`` masks: by value around a set_power request, by name on
the lines osc-lib logs before the command runs (IPMI ``kg`` included)."""

import logging

from nova_drs import client
from nova_drs.osc import plugin  # noqa: F401  (installs the osc-lib masks)


class _Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _logged(name, message, *args):
    logger = logging.getLogger(name)
    keep = _Keep()
    logger.addHandler(keep)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug(message, *args)
    finally:
        logger.removeHandler(keep)
        logger.setLevel(level)
    return keep.lines[0]


def test_request_body_masked_by_value_only_while_the_request_runs():
    secrets = client.power_secrets('ipmi', {'address': 'a', 'username': 'u',
                                            'password': 'pa"ss', 'kg': 'K3y'})
    assert secrets == {'pa"ss', 'K3y'}
    body = '{"set_power": {"options": {"password": "pa\\"ss", "kg": "K3y"}}}'
    with client.masked_logs(secrets):
        line = _logged('keystoneauth.session', "REQ: curl -d '%s'", body)
    assert line == 'REQ: curl -d \'{"set_power": {"options": {"password": "***", "kg": "***"}}}\''
    assert 'K3y' in _logged('keystoneauth.session', body)  # the filter is gone again


def test_osc_command_line_and_parsed_arguments_masked_by_name():
    start = _logged('osc_lib.shell', 'START with options: %s',
                    'drs host set h --power-option kg=K3y --power-option passphrase=Ph')
    assert start == ('START with options: drs host set h --power-option kg=*** '
                     '--power-option passphrase=***')
    parsed = _logged('nova_drs.osc.v1.hosts.SetHost', 'run(%s)',
                     {'power_option': {'kg': "K'3y", 'address': '10.0.0.5'}})
    assert parsed == "run({'power_option': {'kg': \"***\", 'address': '10.0.0.5'}})"
