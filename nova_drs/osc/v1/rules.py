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

"""``openstack drs rule list|create|delete``: allow/deny rules of the loadbalancer."""

# stdlib logging, not oslo_log: this module runs inside the ``openstack``
# client, where osc-lib (not oslo.log) configures logging, as in every
# OpenStackClient plugin.
import logging

from osc_lib import exceptions
from osc_lib.command import command

from nova_drs.osc.v1 import hosts

LOG = logging.getLogger(__name__)

COLUMNS = (('ID', 'id'), ('Type', 'type'), ('Value', 'value'), ('Allow', 'allow'))


class ListRule(command.Lister):
    """List the allow/deny rules."""

    def take_action(self, parsed_args):
        return hosts.table(COLUMNS, self.app.client_manager.drs.list_rules())


class CreateRule(command.ShowOne):
    """Create an allow/deny rule matching hosts by a regular expression."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('value', metavar='<regex>',
                            help='Regular expression on the host, aggregate or zone name')
        parser.add_argument('--type', required=True,
                            choices=['host', 'aggregate', 'availability_zone'],
                            help='What the expression matches')
        allow = parser.add_mutually_exclusive_group(required=True)
        allow.add_argument('--allow', dest='allow', action='store_true',
                           help='The loadbalancer may use matching hosts')
        allow.add_argument('--deny', dest='allow', action='store_false',
                           help='The loadbalancer never touches matching hosts')
        return parser

    def take_action(self, parsed_args):
        return hosts.show(self.app.client_manager.drs.create_rule(
            parsed_args.type, parsed_args.value, parsed_args.allow))


class DeleteRule(command.Command):
    """Delete allow/deny rules (one or several, as OSC deletes do)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('rule_id', metavar='<rule-id>', nargs='+',
                            help='ID of a rule to delete (repeat for several)')
        return parser

    def take_action(self, parsed_args):
        """Every rule is tried; the ones that failed are named at the end (exit 1)."""
        failed = 0
        for rule_id in parsed_args.rule_id:
            try:
                self.app.client_manager.drs.delete_rule(rule_id)
            except Exception as exc:
                failed += 1
                LOG.error('failed to delete rule %s: %s', rule_id, exc)
        if failed:
            raise exceptions.CommandError('%d of %d rules failed to delete'
                                          % (failed, len(parsed_args.rule_id)))
