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

"""Every module readable in minutes: at most 400 lines, no function over 60.

Schema migrations (one long declarative ``upgrade``) and the tempest plugin's
tests are left out. ``KNOWN`` lists what is still over the limits: a split of
these three daemon modules made tests/functional/test_opt_out.py fail about
one run in four (cause not found), so it did not land; nothing may join them.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
#: Still over the limits (module, or module: function()); nothing may join them.
KNOWN = {'nova_drs/daemon/coordination.py', 'nova_drs/daemon/lifecycle.py',
         'nova_drs/daemon/lifecycle.py: _move_servers()', 'nova_drs/daemon/observe.py',
         'nova_drs/daemon/observe.py: build_view()'}


def _modules():
    for package in ('nova_drs', 'novaclient_ext'):
        for path in sorted((ROOT / package).rglob('*.py')):
            relative = path.relative_to(ROOT).as_posix()
            if '/migrations/versions/' in relative or relative.startswith('nova_drs/tests/'):
                continue
            yield relative, path.read_text()


def oversized(modules):
    found = []
    for name, source in modules:
        lines = source.count('\n')
        if lines > MAX_MODULE_LINES:
            found.append((name, lines))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(('%s: %s()' % (name, node.name), length))
    return found


def test_no_module_or_function_over_the_limits_but_the_known_ones():
    assert list(_modules()), 'no module found under %s' % ROOT
    assert [(what, lines) for what, lines in oversized(_modules())
            if what not in KNOWN] == []


def test_the_check_finds_a_long_module_and_a_long_function():
    body = '\n'.join('    x = %d' % i for i in range(61))
    long_function = 'def f():\n%s\n' % body
    assert oversized([('m.py', long_function)]) == [('m.py: f()', 62)]
    assert oversized([('m.py', 'x = 1\n' * 401)]) == [('m.py', 401)]
