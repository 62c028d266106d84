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

"""Oscillation guard: group ``[drs_oscillation]``.

A server the daemon keeps moving is held where it is, however good the
next move looks: repeated moves cost more than the imbalance they fix.
"""

from oslo_config import cfg

oscillation_group = cfg.OptGroup(
    'drs_oscillation', title='nova-drs oscillation guard',
    help='Hold servers the daemon has migrated too often.')

oscillation_opts = [
    cfg.IntOpt('max_moves_per_server',
               default=3, min=0,
               help='Migrations a server may get within oscillation_window; a '
                    'server already moved this many times is held (its planned '
                    'migration, and the suspend of the host it would leave, are '
                    'dropped and reported).'),
    cfg.IntOpt('oscillation_window',
               default=43200, min=0,
               help='Seconds of migration history the guard counts; 0 turns the '
                    'guard off. 12 hours: a day\'s window held the evening\'s '
                    'consolidation back (servers moved in the morning could not '
                    'move again), 6 hours let load swings move servers too often '
                    '(doc/source/twin.md, findings).'),
]


def list_opts():
    return [(oscillation_group, oscillation_opts)]
