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

"""``nova-drs-manage``: administrative commands (database, later overcommit, stats).

Reads nova.conf like every nova tool (``--config-file``/``--config-dir``),
since nova-drs options live there. Command categories register themselves in
``CATEGORIES``: each is a module with ``add_parsers(subparsers)`` whose
sub-commands set ``func`` to a callable taking the CONF object and returning
an exit code.
"""

import sys

from oslo_config import cfg

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.cmd import manage_db
from nova_drs.cmd import manage_overcommit
from nova_drs.cmd import manage_power
from nova_drs.cmd import manage_stats
from nova_drs.cmd import startup_checks
from nova_drs.conf import startup

CONF = drs_conf.CONF
PROG = 'nova-drs-manage'

CATEGORIES = (
    manage_db,
    manage_overcommit,
    manage_power,
    manage_stats,
)


def _add_command_parsers(subparsers):
    for category in CATEGORIES:
        category.add_parsers(subparsers)


category_opt = cfg.SubCommandOpt('category', title='Command categories',
                                 handler=_add_command_parsers)


def main(argv=None):
    CONF.register_cli_opt(category_opt)
    argv = sys.argv[1:] if argv is None else argv
    try:
        try:
            startup.parse(CONF, argv, PROG)
            startup.validate(CONF)
            startup_checks.check_plugins(CONF)
            startup_checks.check_paths(CONF)
            startup_checks.probe_database(CONF)
        except exception.ConfigError as exc:
            print('%s: %s' % (PROG, exc), file=sys.stderr)
            return 1
        return CONF.category.func(CONF) or 0
    except Exception as exc:  # one readable line, never a traceback
        print('%s: %s' % (PROG, exc), file=sys.stderr)
        return 1
    finally:
        CONF.reset()
        CONF.unregister_opt(category_opt)

if __name__ == '__main__':
    sys.exit(main())
