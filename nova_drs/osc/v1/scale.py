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
import time

from osc_lib.command import command
from osc_lib import exceptions

from nova_drs.osc.v1.hosts import show


def wait_for_request(get_request, request_id, timeout, interval, report):
    """Poll a scale request until done or failed; the final request dict."""
    deadline = time.monotonic() + timeout
    message = None
    while True:
        request = get_request(request_id)
        progress = request.get('progress') or {}
        if progress.get('message') != message:
            message = progress.get('message')
            report('request %s: %s %s' % (request_id, request['status'], message or ''))
        if request['status'] in ('done', 'failed'):
            return request
        if time.monotonic() >= deadline:
            raise exceptions.CommandError('timed out after %ss waiting for request %s '
                                          '(still %s)' % (timeout, request_id,
                                                          request['status']))
        time.sleep(interval)


class ScaleServer(command.ShowOne):
    """Scale a server to another flavor: in place, else within its cluster, else refused."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>', help='Server (UUID)')
        parser.add_argument('flavor', metavar='<flavor>', help='Flavor (ID or name)')
        parser.add_argument('--wait', action='store_true', default=False,
                            help='Wait, showing progress on stderr, until the request is '
                                 'done or failed')
        parser.add_argument('--timeout', metavar='<seconds>', type=float, default=1800,
                            help='Give up waiting after this many seconds (default 1800)')
        parser.add_argument('--poll-interval', metavar='<seconds>', type=float, default=5,
                            help='Seconds between two progress checks (default 5)')
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.drs
        request = client.action('scale_server', server=parsed_args.server,
                                flavor=parsed_args.flavor)['request']
        sys.stderr.write('scale of %s to %s accepted (request %s)\n'
                         % (parsed_args.server, parsed_args.flavor, request['id']))
        if parsed_args.wait:
            request = wait_for_request(client.get_request, request['id'],
                                       parsed_args.timeout, parsed_args.poll_interval,
                                       lambda line: sys.stderr.write(line + '\n'))
            if request['status'] == 'failed':
                raise exceptions.CommandError('scale of %s failed: %s' % (
                    parsed_args.server, (request.get('progress') or {}).get('message')))
        return show(request)
