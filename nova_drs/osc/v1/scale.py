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

"""``openstack drs server scale``: scale a server to another flavor."""

import sys

from osc_lib import exceptions
from osc_lib.command import command

from nova_drs.osc.v1.hosts import add_wait_arguments
from nova_drs.osc.v1.hosts import show


class ScaleServer(command.ShowOne):
    """Scale a server to another flavor: in place, else within its cluster, else refused."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>', help='Server (UUID)')
        parser.add_argument('flavor', metavar='<flavor>', help='Flavor (ID or name)')
        return add_wait_arguments(parser, 'the request is done or failed', 1800)

    def take_action(self, parsed_args):
        client = self.app.client_manager.drs
        request = client.action('scale_server', server=parsed_args.server,
                                flavor=parsed_args.flavor)['request']
        sys.stderr.write('scale of %s to %s accepted (request %s)\n'
                         % (parsed_args.server, parsed_args.flavor, request['id']))
        if parsed_args.wait:
            request = client.wait_request(request['id'], parsed_args.timeout,
                                          parsed_args.poll_interval,
                                          lambda line: sys.stderr.write(line + '\n'))
            if request['status'] == 'failed':
                raise exceptions.CommandError('scale of %s failed: %s' % (
                    parsed_args.server, (request.get('progress') or {}).get('message')))
        return show(request)
