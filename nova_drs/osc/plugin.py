"""OpenStackClient plugin: ``openstack drs ...`` commands for the nova-drs API.

Registered through the ``openstack.cli.extension`` entry point ``drs``; the
commands live in the ``openstack.drs.v1`` group. The API is served by
nova-api itself, so the client talks to the compute endpoint of the catalog.
"""

from osc_lib import utils

DEFAULT_API_VERSION = '1'
API_VERSION_OPTION = 'os_drs_api_version'
API_NAME = 'drs'
API_VERSIONS = {'1': 'nova_drs.osc.client.DrsClient'}


def make_client(instance):
    client_class = utils.get_client_class(API_NAME, instance._api_version[API_NAME],
                                          API_VERSIONS)
    return client_class(session=instance.session, region_name=instance.region_name,
                        interface=instance.interface)


def build_option_parser(parser):
    parser.add_argument(
        '--os-drs-api-version', metavar='<drs-api-version>',
        default=utils.env('OS_DRS_API_VERSION'),
        help='nova-drs API version, default=%s (Env: OS_DRS_API_VERSION)'
             % DEFAULT_API_VERSION)
    return parser
