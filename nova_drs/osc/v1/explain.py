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

"""``openstack drs explain host|server X``: why it was (not) suspended or moved."""

from osc_lib.command import command

COLUMNS = ('Cycle', 'Verdict', 'Refusal', 'Reason', 'Refused Candidates')


def rows(decisions):
    """One line per cycle: time, verdict, what refused it, why, refused candidates."""
    return [(d['cycle_at'], d['verdict'], d['refusal'] or '', d['reason'],
             ', '.join('%s (%s)' % (r['host'], r['refusal']) for r in d['refused']))
            for d in decisions]


def state_row(state):
    """A host not active first says so: the daemon plans nothing for a
    suspended host, so its last decisions may be long gone."""
    if not state or state['state'] == 'active':
        return []
    return [(state['since'] or '', 'now %s' % state['state'], '',
             '%s since %s: %s' % (state['state'], state['since'] or 'unknown',
                                  state['reason'] or 'no reason recorded'), '')]


class _Explain(command.Lister):
    KIND = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(self.KIND, metavar='<%s>' % self.KIND, help=self.HELP)
        parser.add_argument('--cycles', metavar='<N>', type=int, default=10,
                            help='The last N cycles of the daemon (1..100, default 10)')
        return parser

    def take_action(self, parsed_args):
        body = self.app.client_manager.drs.explain(self.KIND, getattr(parsed_args, self.KIND),
                                                   parsed_args.cycles)
        return COLUMNS, state_row(body.get('state')) + rows(body['decisions'])


class ExplainHost(_Explain):
    """Why a host was (or was not) suspended, woken or relieved in the last cycles."""

    KIND = 'host'
    HELP = 'Compute host (nova service host)'


class ExplainServer(_Explain):
    """Why a server was (or was not) moved in the last cycles."""

    KIND = 'server'
    HELP = 'Server (name or UUID; a name several servers bear is refused)'
