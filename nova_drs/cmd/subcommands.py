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

"""One nova-drs-manage category and its sub-commands, declared once."""


def category(subparsers, name, description, commands):
    """Add ``name`` with ``commands`` ({command: (func, help)}); returns their parsers.

    Each command's parser calls ``func(conf)`` (see nova_drs.cmd.manage); the
    caller adds the command's own arguments to the parser it gets back.
    """
    parser = subparsers.add_parser(name, help=description)
    group = parser.add_subparsers(dest='%s_command' % name,
                                  metavar='{%s}' % ','.join(commands))
    group.required = True
    parsers = {}
    for command, (func, help_text) in commands.items():
        parsers[command] = group.add_parser(command, help=help_text)
        parsers[command].set_defaults(func=func)
    return parsers
