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

"""``nova lb-*`` commands: the nova-drs loadbalancer from the nova CLI.

python-novaclient discovers this module through the ``novaclient.extension``
entry point named ``lb``: it attaches ``LoadBalancerManager`` as ``cs.lb``
and adds every ``do_*`` function below as a sub-command.
"""

import getpass
import json

from novaclient import exceptions
from novaclient import utils

from nova_drs import client as drs_client
from nova_drs.novaclient_ext.manager import LoadBalancerManager  # noqa: F401  (found by novaclient)

HOST_COLUMNS = ['host', 'suspend_state', 'cpu_used_percent', 'memory_used',
                'memory_total', 'instances']
HOST_DETAIL_COLUMNS = HOST_COLUMNS + ['hypervisor_hostname', 'vcpus', 'mac_to_wake',
                                      'power_driver', 'power_mode', 'wake_failed',
                                      'state_changed_at', 'state_reason']
RULE_COLUMNS = ['id', 'type', 'value', 'allow']
TRUE_WORDS = ('true', 'yes', 'allow', '1')
FALSE_WORDS = ('false', 'no', 'deny', '0')


class _Row:
    """One table row: attributes named as print_list derives them from headings."""

    def __init__(self, values):
        self.__dict__.update(values)


def _headings(columns):
    labels = {'cpu_used_percent': 'CPU %', 'mac_to_wake': 'MAC to wake',
              'vcpus': 'vCPUs', 'suspend_state': 'State'}
    return [labels.get(column, column.replace('_', ' ').title()) for column in columns]


def _print_rows(rows, columns):
    headings = _headings(columns)
    attributes = [heading.lower().replace(' ', '_') for heading in headings]
    utils.print_list(
        [_Row({attribute: '-' if row.get(column) is None else row[column]
               for attribute, column in zip(attributes, columns, strict=True)})
         for row in rows],
        headings, sortby_index=None)


@utils.arg('--detail', action='store_true', default=False,
           help='Also show hypervisor hostname, vCPUs, power settings and the last '
                'state change.')
def do_lb_host_list(cs, args):
    """List compute hosts with their DRS state and latest statistics."""
    _print_rows(cs.lb.list_hosts(), HOST_DETAIL_COLUMNS if args.detail else HOST_COLUMNS)


@utils.arg('host', metavar='<host>', help='Name of the compute host (nova service host).')
def do_lb_host_show(cs, args):
    """Show one compute host with its DRS state and latest statistics."""
    host = cs.lb.get_host(args.host)
    if 'pinned_servers' in host:
        host['pinned_servers'] = '\n'.join('%(id)s (%(level)s)' % server
                                            for server in host['pinned_servers'])
    if 'allocation' in host:
        host['allocation'] = drs_client.allocation_text(host['allocation'])
    utils.print_dict(host)


def _wait_args(until='the host reaches its target state', timeout=900):
    """``--wait``, ``--timeout`` and ``--poll-interval`` of a command that can wait."""
    def decorate(function):
        function = utils.arg('--wait', action='store_true', default=False,
                             help='Wait and show progress until %s.' % until)(function)
        function = utils.arg('--timeout', metavar='<seconds>', type=float, default=timeout,
                             help='Give up waiting after this many seconds (default %d).'
                             % timeout)(function)
        return utils.arg('--poll-interval', metavar='<seconds>', type=float, default=5,
                         help='Seconds between two checks while waiting (default 5).'
                         )(function)
    return decorate


def _host_change(action, description, host_help, follow=True, force=False):
    """The ``nova lb-*`` command of host ``action`` (a ``HOST_CHANGES`` key), which
    can wait until the action ended; ``force``: it takes ``--force``."""
    change = drs_client.HOST_CHANGES[action]

    def command(cs, args):
        arguments = {'host': args.host}
        if force and args.force:
            arguments['force'] = True
        reply = cs.lb.action(action, **arguments)
        host = reply['host']
        hint = '; follow with: nova lb-host-show %s' % args.host if follow else ''
        print(change.accepted(args.host, host['suspend_state']) + hint)
        moved = drs_client.opted_out_moved(reply)
        if moved:
            print(moved)
        if args.wait:
            state = cs.lb.wait_host(args.host, action, args.timeout, args.poll_interval,
                                    lambda line: print(line, flush=True))['suspend_state']
            if state != change.wanted:
                raise exceptions.CommandError(change.failed(args.host, state))

    command.__doc__ = description
    command = utils.arg('host', metavar='<host>', help=host_help)(_wait_args()(command))
    if force:
        command = utils.arg(
            '--force', action='store_true', default=False,
            help='Move servers opted out of DRS (drs:automation=disabled) too; without '
                 'it their host is not suspended (409).')(command)
    return command


do_lb_suspend = _host_change(
    'suspend_host', 'Ask the DRS daemon to evacuate and suspend a host.',
    'Name of the compute host to suspend.', force=True)
do_lb_unsuspend = _host_change(
    'unsuspend_host', 'Ask the DRS daemon to wake a suspended host, or cancel a pending suspend.',
    'Name of the compute host to wake.')
do_lb_maintenance_enter = _host_change(
    'enter_maintenance', 'Ask the DRS daemon to empty a host and keep it disabled and powered on.',
    'Name of the compute host to maintain.')
do_lb_maintenance_exit = _host_change(
    'exit_maintenance', "End a host's maintenance; the DRS daemon re-enables its compute service.",
    'Name of the compute host in maintenance.', follow=False)


@utils.arg('host', metavar='<host>', help='Name of the compute host.')
def do_lb_host_clear_wake_failed(cs, args):
    """Clear a host's wake_failed flag once its wake path is fixed."""
    host = cs.lb.action('clear_wake_failed', host=args.host)['host']
    print('wake_failed of %s cleared (state: %s)' % (args.host, host['suspend_state']))


@utils.arg('host', metavar='<host>', help='Name of the compute host.')
@utils.arg('--driver', metavar='<driver>', required=True,
           help='Power driver name (e.g. ipmi, redfish, wol, ssh).')
@utils.arg('--mode', metavar='<mode>', choices=['s3', 'off'], default=None,
           help='How the host is suspended: s3 (suspend to RAM) or off.')
@utils.arg('--mac-to-wake', metavar='<mac>', default=None, help='MAC address for Wake-on-LAN.')
@utils.arg('--option', metavar='<key=value>', action='append', default=[],
           help='Driver option (repeat for several); secrets are stored sealed for the '
                'DRS daemon and never shown, --debug included.')
@utils.arg('--option-prompt', metavar='<key>', action='append', default=[],
           help='Prompt for the value of driver option <key> without echoing it (e.g. '
                'password), rather than putting a secret on the command line.')
def do_lb_host_set_power(cs, args):
    """Set a host's power driver, mode and options."""
    options = {}
    for pair in args.option:
        key, sep, value = pair.partition('=')
        if not sep or not key:
            raise exceptions.CommandError('--option must be key=value, got %r' % key)
        options[key] = value
    for key in args.option_prompt:
        options[key] = getpass.getpass('%s %s: ' % (args.driver, key))
    arguments = {'host': args.host, 'driver': args.driver}
    if args.mode:
        arguments['mode'] = args.mode
    if args.mac_to_wake:
        arguments['mac_to_wake'] = args.mac_to_wake
    if options:
        arguments['options'] = options
    host = cs.lb.action('set_power', **arguments)['host']
    print('power settings of %s set (driver %s, mode %s)'
          % (args.host, host['power_driver'], host['power_mode']))


@utils.arg('host', metavar='<host>', help='Name of the compute host to test.')
@_wait_args('the test is done or failed', 1800)
def do_lb_wake_test(cs, args):
    """Ask the DRS daemon to test suspending and waking a host."""
    request = cs.lb.action('wake_test', host=args.host)['request']
    print('Wake test of %s requested (request %s, %s); follow with: nova lb-request-show %s'
          % (args.host, request['id'], request['status'], request['id']))
    if not args.wait:
        return
    request = cs.lb.wait_request(request['id'], args.timeout, args.poll_interval,
                                 lambda line: print(line, flush=True))
    if request['status'] == 'failed':
        raise exceptions.CommandError('wake test of %s failed: %s'
                                      % (args.host, request['result']))


@utils.arg('request', metavar='<request-id>', help='Id of the request.')
def do_lb_request_show(cs, args):
    """Show a request of any kind (wake test, scale) with its status and outcome."""
    utils.print_dict(cs.lb.get_request(args.request))


def do_lb_rule_list(cs, args):
    """List the allow/deny rules of the loadbalancer."""
    _print_rows(cs.lb.list_rules(), RULE_COLUMNS)


def _allow(word):
    if word.lower() in TRUE_WORDS:
        return True
    if word.lower() in FALSE_WORDS:
        return False
    raise exceptions.CommandError('<allow> must be one of %s'
                                  % ', '.join(TRUE_WORDS + FALSE_WORDS))


@utils.arg('type', metavar='<type>', choices=['host', 'aggregate', 'availability_zone'],
           help='What the rule matches: host, aggregate or availability_zone.')
@utils.arg('value', metavar='<value>', help='Regular expression on the name.')
@utils.arg('allow', metavar='<allow>',
           help='true/allow: the loadbalancer may use matching hosts; false/deny: never.')
def do_lb_rule_add(cs, args):
    """Add an allow/deny rule."""
    _print_rows([cs.lb.create_rule(args.type, args.value, _allow(args.allow))], RULE_COLUMNS)


@utils.arg('id', metavar='<id>', help='Id of the rule to delete.')
def do_lb_rule_delete(cs, args):
    """Delete an allow/deny rule."""
    cs.lb.delete_rule(args.id)
    print('Rule %s deleted' % args.id)


@utils.arg('--cluster', metavar='<cluster>', default=None,
           help='Plans of this cluster only.')
@utils.arg('--status', metavar='<status>', default=None,
           choices=drs_client.PLAN_STATUSES,
           help='Plans in this status only.')
@utils.arg('--limit', metavar='<N>', type=int, default=None,
           help='At most N plans (1..1000, default 100).')
def do_lb_plan_list(cs, args):
    """List the loadbalancer's plans, newest first: status, cluster and age."""
    _print_rows([drs_client.plan_row(plan)
                 for plan in cs.lb.list_plans(args.status, args.cluster, args.limit)],
                [key for _, key in drs_client.PLAN_COLUMNS])


@utils.arg('plan_id', metavar='<plan-id>', type=int, nargs='?', default=None,
           help='ID of the plan (default: the last one).')
@utils.arg('--cluster', metavar='<cluster>', default=None,
           help='Show the last plan of this cluster only.')
def do_lb_plan_show(cs, args):
    """Show a plan (the last one by default) with its reasons and each action's progress."""
    plan = cs.lb.get_plan(args.cluster, args.plan_id)
    if plan is None:
        print('No plan yet: the loadbalancer has not planned anything.')
        return
    utils.print_dict(dict({key: value for key, value in plan.items()
                           if key not in ('actions', 'reasons', 'progress')},
                          progress=drs_client.plan_progress(plan.get('progress'))))
    _print_rows([{'#': index, 'status': action.get('status', '') if isinstance(action, dict)
                  else '', 'action': json.dumps(
                      {k: v for k, v in action.items() if k not in ('status', 'detail')}
                      if isinstance(action, dict) else action, sort_keys=True),
                  'detail': (action.get('detail') if isinstance(action, dict) else None) or ''}
                 for index, action in enumerate(plan['actions'], 1)],
                ['#', 'status', 'action', 'detail'])
    _print_rows([{'#': index, 'reason': reason} for index, reason
                 in enumerate(plan['reasons'], 1)], ['#', 'reason'])


@utils.arg('kind', metavar='<host|server>', choices=['host', 'server'],
           help='What to explain: a compute host or a server.')
@utils.arg('subject', metavar='<name>',
           help='Compute host name, or server name or ID.')
@utils.arg('--cycles', metavar='<N>', type=int, default=10,
           help='The last N cycles of the daemon (1..100, default 10).')
def do_lb_explain(cs, args):
    """Why a host was (not) suspended or a server (not) moved in the last cycles."""
    subject = args.subject
    if args.kind == 'server':
        subject = utils.find_resource(cs.servers, subject).id
    body = cs.lb.explain(args.kind, subject, args.cycles)
    state = body.get('state') or {'state': 'active'}
    if state['state'] != 'active':
        print('%s is %s since %s: %s' % (args.subject, state['state'],
                                         state['since'] or 'unknown',
                                         state['reason'] or 'no reason recorded'))
    if not body['decisions']:
        print('No decisions about %s %s in the last %d cycles.'
              % (args.kind, args.subject, body['cycles']))
    for decision in body['decisions']:
        refusal = ' [%s]' % decision['refusal'] if decision['refusal'] else ''
        print('%s  %s%s: %s' % (decision['cycle_at'], decision['verdict'], refusal,
                                decision['reason']))
        for refused in decision['refused']:
            print('    refused %s: %s' % (refused['host'], refused['refusal']))


@utils.arg('server', metavar='<server>', help='Name or ID of the server to scale.')
@utils.arg('flavor', metavar='<flavor>', help='Name or ID of the new flavor.')
@_wait_args('the request is done or failed', 1800)
def do_lb_scale(cs, args):
    """Scale a server to another flavor: in place, else within its cluster, else refused."""
    server = utils.find_resource(cs.servers, args.server)
    request = cs.lb.action('scale_server', server=server.id, flavor=args.flavor)['request']
    print('Scale of %s to %s accepted (request %s); follow with --wait'
          % (server.id, args.flavor, request['id']))
    if not args.wait:
        return
    request = cs.lb.wait_request(request['id'], args.timeout, args.poll_interval,
                                 lambda line: print(line, flush=True))
    if request['status'] == 'failed':
        raise exceptions.CommandError('scale of %s failed: %s' % (
            server.id, (request.get('progress') or {}).get('message')))
