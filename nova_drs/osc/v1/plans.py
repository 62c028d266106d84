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

"""``openstack drs plan list|show|approve|reject``: the loadbalancer's plans."""

from cliff import columns
from osc_lib.command import command

from nova_drs import client
from nova_drs.osc.v1 import hosts


class ActionsColumn(columns.FormattableColumn):
    """A plan's actions: in a table one line per action (position, type,
    instance or host, source, destination, reason, status); in json or yaml the
    list of dicts the API returned."""

    def human_readable(self):
        return client.text_table(client.PLAN_ACTION_COLUMNS, [
            client.plan_action_row(position, action)
            for position, action in enumerate(self._value or (), 1)])


class LinesColumn(columns.FormattableColumn):
    """A list shown one item a line in a table, as the list in json or yaml."""

    def human_readable(self):
        return '\n'.join(str(item) for item in self._value or ())


def show_plan(plan):
    """(columns, values) of a plan for ShowOne: its actions and reasons formatted."""
    plan = dict(plan)
    if 'actions' in plan:
        plan['actions'] = ActionsColumn(plan['actions'])
    if 'reasons' in plan:
        plan['reasons'] = LinesColumn(plan['reasons'])
    if 'progress' in plan:
        plan['progress'] = client.plan_progress(plan['progress'])
    return hosts.show(plan)


class ListPlan(command.Lister):
    """List the loadbalancer's plans, newest first: status, cluster and age."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--cluster', metavar='<cluster>', help='Plans of this cluster only')
        parser.add_argument('--status', metavar='<status>',
                            choices=client.PLAN_STATUSES, help='Plans in this status only')
        parser.add_argument('--limit', metavar='<N>', type=int, default=None,
                            help='At most N plans (1..1000, default 100)')
        return parser

    def take_action(self, parsed_args):
        plans = self.app.client_manager.drs.list_plans(
            parsed_args.status, parsed_args.cluster, parsed_args.limit)
        return hosts.table(client.PLAN_COLUMNS, [client.plan_row(plan) for plan in plans])


class ShowPlan(command.ShowOne):
    """Show a plan (the last one by default) with its reasons and each action's progress."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('plan_id', metavar='<plan-id>', type=int, nargs='?',
                            help='ID of the plan (default: the last one)')
        parser.add_argument('--cluster', metavar='<cluster>',
                            help='Show the last plan of this cluster only')
        return parser

    def take_action(self, parsed_args):
        plan = self.app.client_manager.drs.get_plan(parsed_args.cluster, parsed_args.plan_id)
        return show_plan(plan or {'id': None, 'status': 'no plan yet'})


class _Decide(command.ShowOne):
    decision = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('plan_id', metavar='<plan-id>', type=int, help='ID of the plan')
        return parser

    def take_action(self, parsed_args):
        return show_plan(self.app.client_manager.drs.decide_plan(self.decision,
                                                                 parsed_args.plan_id))


class ApprovePlan(_Decide):
    """Approve a pending plan (manual mode): the daemon carries it out."""

    decision = 'approve'


class RejectPlan(_Decide):
    """Reject a pending plan (manual mode)."""

    decision = 'reject'
