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

"""``openstack drs report energy``: kWh drawn and saved by suspending hosts."""

from osc_lib.command import command

FIELDS = (('Since', 'since'), ('Until', 'until'), ('Cluster', 'cluster'), ('Hosts', 'hosts'),
          ('kWh Drawn', 'kwh_drawn'), ('kWh Saved', 'kwh_saved'),
          ('Suspended Host-Hours', 'suspended_host_hours'), ('Migrations', 'migrations'),
          ('Measured Share', 'measured_share'), ('Measured Hosts', 'measured_hosts'))


class ReportEnergy(command.ShowOne):
    """Energy drawn and saved against "all hosts on" (modelled unless measured)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--cluster', metavar='<aggregate>',
                            help='Only the hosts of this aggregate')
        parser.add_argument('--since', metavar='<7d|12h|30m|ISO time>', default='24h',
                            help='Start of the period (default: 24h ago)')
        return parser

    def take_action(self, parsed_args):
        report = self.app.client_manager.drs.energy_report(parsed_args.since,
                                                           parsed_args.cluster)
        return (tuple(heading for heading, _ in FIELDS),
                tuple(report.get(key) for _, key in FIELDS))
