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

"""``openstack drs plan show|approve|reject``: the loadbalancer's plans."""

from osc_lib.command import command

from nova_drs.osc.v1 import hosts


class ShowPlan(command.ShowOne):
    """Show the last plan of the loadbalancer with its reasons."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--cluster', metavar='<cluster>',
                            help='Show the last plan of this cluster only')
        return parser

    def take_action(self, parsed_args):
        plan = self.app.client_manager.drs.get_plan(parsed_args.cluster)
        return hosts.show(plan or {'id': None, 'status': 'no plan yet'})


class _Decide(command.ShowOne):
    decision = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('plan_id', metavar='<plan-id>', type=int, help='ID of the plan')
        return parser

    def take_action(self, parsed_args):
        return hosts.show(self.app.client_manager.drs.decide_plan(self.decision,
                                                                  parsed_args.plan_id))


class ApprovePlan(_Decide):
    """Approve a pending plan (manual mode): the daemon carries it out."""

    decision = 'approve'


class RejectPlan(_Decide):
    """Reject a pending plan (manual mode)."""

    decision = 'reject'
