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
tests are left out.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules():
    for path in sorted((ROOT / 'nova_drs').rglob('*.py')):
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


def test_no_module_or_function_over_the_limits():
    assert list(_modules()), 'no module found under %s' % ROOT
    assert oversized(_modules()) == []


def test_the_check_finds_a_long_module_and_a_long_function():
    body = '\n'.join('    x = %d' % i for i in range(61))
    long_function = 'def f():\n%s\n' % body
    assert oversized([('m.py', long_function)]) == [('m.py: f()', 62)]
    assert oversized([('m.py', 'x = 1\n' * 401)]) == [('m.py', 401)]
