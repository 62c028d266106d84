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

"""``openstack drs host list|show|suspend|unsuspend|set|wake test|maintenance enter|exit``."""

import getpass
import sys

from osc_lib import exceptions
from osc_lib.cli import parseractions
from osc_lib.command import command

from nova_drs import client as drs_client

COLUMNS = (('Host', 'host'), ('State', 'suspend_state'), ('CPU %', 'cpu_used_percent'),
           ('Memory Used', 'memory_used'), ('Memory Total', 'memory_total'),
           ('Instances', 'instances'))
LONG_COLUMNS = COLUMNS + (
    ('Hypervisor Hostname', 'hypervisor_hostname'), ('vCPUs', 'vcpus'),
    ('MAC To Wake', 'mac_to_wake'), ('Power Driver', 'power_driver'),
    ('Power Mode', 'power_mode'), ('Wake Failed', 'wake_failed'),
    ('State Changed At', 'state_changed_at'), ('State Reason', 'state_reason'))


def show(data):
    """(columns, values) of a dict, as cliff's ShowOne expects."""
    keys = sorted(data)
    shown = {'pinned_servers': pinned_text, 'allocation': drs_client.allocation_text}
    return tuple(keys), tuple(shown[key](data[key]) if key in shown else data[key]
                              for key in keys)


def table(columns, items):
    """(headings, rows) of dicts for ``columns`` ((heading, key) pairs), for cliff's Lister."""
    return ([heading for heading, _ in columns],
            [[item.get(key) for _, key in columns] for item in items])


def pinned_text(servers):
    """``uuid (level)`` lines of the servers opted out of DRS (drs:automation)."""
    return '\n'.join('%(id)s (%(level)s)' % server for server in servers or ())


class LongLister(command.Lister):
    """A lister with ``--long``; ``long_help`` says what it adds."""

    long_help = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--long', action='store_true', default=False, help=self.long_help)
        return parser


class ListHost(LongLister):
    """List compute hosts with their DRS state and latest statistics."""

    long_help = ('Also show hypervisor hostname, vCPUs, power settings and the last state '
                 'change')

    def take_action(self, parsed_args):
        columns = LONG_COLUMNS if parsed_args.long else COLUMNS
        return table(columns, self.app.client_manager.drs.list_hosts())


class _OneHost(command.ShowOne):
    """A command on one compute host, named by its first argument."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', metavar='<host>', help='Compute host (nova service host)')
        return parser


class ShowHost(_OneHost):
    """Show one compute host with its DRS state and latest statistics."""

    def take_action(self, parsed_args):
        return show(self.app.client_manager.drs.get_host(parsed_args.host))


def add_wait_arguments(parser, until, timeout):
    """``--wait``, ``--timeout`` and ``--poll-interval`` of a command that can wait."""
    parser.add_argument('--wait', action='store_true', default=False,
                        help='Wait, showing progress on stderr, until %s' % until)
    parser.add_argument('--timeout', metavar='<seconds>', type=float, default=timeout,
                        help='Give up waiting after this many seconds (default %d)' % timeout)
    parser.add_argument('--poll-interval', metavar='<seconds>', type=float, default=5,
                        help='Seconds between two checks (default 5)')
    return parser


class _StateChange(_OneHost):
    """A host action of ``client.HOST_CHANGES``, waited for with --wait."""

    action = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        return add_wait_arguments(parser, 'the host reaches its target state', 900)

    def arguments(self, parsed_args):
        """The action's arguments in the request body."""
        return {'host': parsed_args.host}

    def take_action(self, parsed_args):
        client = self.app.client_manager.drs
        change = drs_client.HOST_CHANGES[self.action]
        reply = client.action(self.action, **self.arguments(parsed_args))
        host = reply['host']
        sys.stderr.write(change.accepted(parsed_args.host, host['suspend_state']) + '\n')
        moved = drs_client.opted_out_moved(reply)
        if moved:
            sys.stderr.write(moved + '\n')
        if parsed_args.wait:
            host = client.wait_host(parsed_args.host, self.action, parsed_args.timeout,
                                    parsed_args.poll_interval,
                                    lambda line: sys.stderr.write(line + '\n'))
            if host['suspend_state'] != change.wanted:
                raise exceptions.CommandError(change.failed(parsed_args.host,
                                                            host['suspend_state']))
        return show(host)


def _state_change(action, description):
    """The cliff command class of host ``action``; ``description`` is its help."""
    name = ''.join(word.title() for word in action.split('_'))
    return type(name, (_StateChange,), {'__module__': __name__, '__doc__': description,
                                        'action': action})


class SuspendHost(_state_change(
        'suspend_host', 'Ask the DRS daemon to evacuate and suspend a host.')):
    """Ask the DRS daemon to evacuate and suspend a host."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--force', action='store_true', default=False,
                            help='Move servers opted out of DRS (drs:automation=disabled) '
                                 'too; without it their host is not suspended (409)')
        return parser

    def arguments(self, parsed_args):
        arguments = super().arguments(parsed_args)
        if parsed_args.force:
            arguments['force'] = True
        return arguments
UnsuspendHost = _state_change(
    'unsuspend_host', 'Ask the DRS daemon to wake a suspended host, or cancel a pending suspend.')
EnterMaintenanceHost = _state_change(
    'enter_maintenance', 'Ask the DRS daemon to empty a host and keep it disabled and powered on.')
ExitMaintenanceHost = _state_change(
    'exit_maintenance', "End a host's maintenance; the DRS daemon re-enables its compute service.")


class SetHost(_OneHost):
    """Set a host's power settings, or clear its wake_failed flag."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--clear-wake-failed', action='store_true', default=False,
                            help='Clear the wake_failed flag once the wake path is fixed, so '
                                 'the daemon may consolidate the host again')
        parser.add_argument('--power-driver', metavar='<driver>',
                            help='Power driver name (e.g. ipmi, redfish, wol); required to '
                                 'change any power setting')
        parser.add_argument('--power-mode', metavar='<mode>', choices=['s3', 'off'],
                            help='How the host is suspended: s3 (suspend to RAM) or off')
        parser.add_argument('--mac-to-wake', metavar='<mac>',
                            help='MAC address for Wake-on-LAN')
        parser.add_argument('--power-option', metavar='<key=value>',
                            action=parseractions.KeyValueAction, default={},
                            help='Driver option (repeat for several); secrets are stored '
                                 'sealed for the DRS daemon and never shown, --debug '
                                 'included')
        parser.add_argument('--power-option-prompt', metavar='<key>', action='append',
                            default=[],
                            help='Prompt for the value of driver option <key> without '
                                 'echoing it (e.g. password), rather than putting a secret '
                                 'on the command line (repeat for several)')
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.drs
        power = (parsed_args.power_driver, parsed_args.power_mode, parsed_args.mac_to_wake,
                 parsed_args.power_option, parsed_args.power_option_prompt)
        if any(power) and not parsed_args.power_driver:
            raise exceptions.CommandError('--power-mode, --mac-to-wake and --power-option'
                                          '[-prompt] need --power-driver')
        if not parsed_args.power_driver and not parsed_args.clear_wake_failed:
            raise exceptions.CommandError('nothing to set: give --power-driver or '
                                          '--clear-wake-failed')
        host = None
        if parsed_args.clear_wake_failed:
            host = client.action('clear_wake_failed', host=parsed_args.host)['host']
        if parsed_args.power_driver:
            host = self._set_power(client, parsed_args)
        return show(host)

    @staticmethod
    def _set_power(client, parsed_args):
        arguments = {'host': parsed_args.host, 'driver': parsed_args.power_driver}
        if parsed_args.power_mode:
            arguments['mode'] = parsed_args.power_mode
        if parsed_args.mac_to_wake:
            arguments['mac_to_wake'] = parsed_args.mac_to_wake
        options = dict(parsed_args.power_option)
        for key in parsed_args.power_option_prompt:
            options[key] = getpass.getpass('%s %s: ' % (parsed_args.power_driver, key))
        if options:
            arguments['options'] = options
        return client.action('set_power', **arguments)['host']


class WakeTestHost(_OneHost):
    """Ask the DRS daemon to test suspending and waking a host.

    The request's outcome is read back with ``--wait`` or, later, with
    ``openstack drs request show <id>``.
    """

    def get_parser(self, prog_name):
        return add_wait_arguments(super().get_parser(prog_name),
                                  'the test is done or failed', 1800)

    def take_action(self, parsed_args):
        client = self.app.client_manager.drs
        request = client.action('wake_test', host=parsed_args.host)['request']
        if parsed_args.wait:
            request = client.wait_request(request['id'], parsed_args.timeout,
                                          parsed_args.poll_interval,
                                          lambda line: sys.stderr.write(line + '\n'))
            if request['status'] == 'failed':
                raise exceptions.CommandError('wake test of %s failed: %s'
                                              % (parsed_args.host, request['result']))
        return show(request)


class ShowRequest(command.ShowOne):
    """Show a request of any kind (wake test, scale) with its status and outcome."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('request', metavar='<request-id>', help='Request id')
        return parser

    def take_action(self, parsed_args):
        return show(self.app.client_manager.drs.get_request(parsed_args.request))
