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

"""OpenStackClient plugin: ``openstack drs ...`` commands for the nova-drs API.

Registered through the ``openstack.cli.extension`` entry point ``drs``; the
commands live in the ``openstack.drs.v1`` group. The API is served by
nova-api itself, so the client talks to the compute endpoint of the catalog.
"""

# stdlib logging, not oslo_log: a Filter is attached to other libraries'
# stdlib loggers (osc-lib's), which oslo.log's adapters do not offer.
import logging

from osc_lib import exceptions
from osc_lib import utils

from nova_drs import client as drs_client

DEFAULT_API_VERSION = '1'
API_VERSION_OPTION = 'os_drs_api_version'
API_NAME = 'drs'
API_VERSIONS = {'1': 'nova_drs.client.DrsClient'}

#: osc-lib logs the command line and each command's parsed arguments with
#: ``--debug``; a ``--power-option kg=…`` would be printed. The plugin is
#: imported before either line is logged.
MASKED_LOGGERS = ('osc_lib.shell', 'nova_drs.osc.v1.hosts.SetHost')
for _name in MASKED_LOGGERS:
    logging.getLogger(_name).addFilter(drs_client.SecretOptionMask())


def make_client(instance):
    client_class = utils.get_client_class(API_NAME, instance._api_version[API_NAME],
                                          API_VERSIONS)
    return client_class(session=instance.session, region_name=instance.region_name,
                        interface=instance.interface, error=exceptions.CommandError)


def build_option_parser(parser):
    parser.add_argument(
        '--os-drs-api-version', metavar='<drs-api-version>',
        default=utils.env('OS_DRS_API_VERSION'),
        help='nova-drs API version, default=%s (Env: OS_DRS_API_VERSION)'
             % DEFAULT_API_VERSION)
    return parser
