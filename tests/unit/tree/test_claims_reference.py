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

"""Every test doc/source/claims.md cites as a claim's proof exists.

A claim's proof is written ``U:daemon/test_x.py::TestY::test_z`` (U unit,
C component, F functional, I integration, relative to that tier's folder).
A test renamed or moved without its claim would leave the claim unproven
while the page still says it is: this reads each cited file's syntax tree
(nothing imported) and finds every class and function the reference names.
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[3]
CLAIMS = ROOT / 'doc' / 'source' / 'claims.md'
TIERS = {'U': 'unit', 'C': 'component', 'F': 'functional', 'I': 'integration'}
REFERENCE = re.compile(r'`([UCFI]):([\w/.-]+\.py)((?:::[\w]+(?:\[[^\]`]*\])?)*)`')


def references(text):
    """[(tier letter, path, [names])] of every reference in ``text``."""
    return [(tier, path, [re.sub(r'\[.*\]$', '', name) for name in names.split('::') if name])
            for tier, path, names in REFERENCE.findall(text)]


def missing(tier, path, names, read=lambda p: p.read_text()):
    """What of ``tier:path::names`` does not exist, or None."""
    source = ROOT / 'tests' / TIERS[tier] / path
    if not source.is_file():
        return 'no file %s' % source.relative_to(ROOT)
    scope = ast.parse(read(source)).body
    for name in names:
        found = [node for node in scope if _defines(node, name)]
        if not found:
            return '%s has no %s' % (source.relative_to(ROOT), name)
        scope = getattr(found[0], 'body', [])
    return None


def _defines(node, name):
    """``node`` defines ``name``: a class, a function, or a test taken from
    another tier's module (``test_x = on_sqlite.test_x``)."""
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name == name
    return isinstance(node, ast.Assign) and not (
        isinstance(node.value, ast.Constant) and node.value.value is None) and any(
        isinstance(target, ast.Name) and target.id == name for target in node.targets)


def test_every_cited_test_exists():
    cited = references(CLAIMS.read_text())
    assert len(cited) > 100, 'no reference found in %s' % CLAIMS
    broken = ['%s:%s::%s: %s' % (tier, path, '::'.join(names), problem)
              for tier, path, names in cited
              for problem in [missing(tier, path, names)] if problem]
    assert not broken, 'claims.md cites tests that do not exist:\n' + '\n'.join(broken)


def test_a_renamed_test_is_found_missing():
    text = '`U:tree/test_claims_reference.py::test_every_cited_test_exists` ' \
           '`U:tree/test_claims_reference.py::test_gone` `F:test_nothing_here.py`'
    problems = [missing(*ref) for ref in references(text)]
    assert problems[0] is None
    assert problems[1].endswith('has no test_gone')
    assert problems[2].startswith('no file tests/functional/test_nothing_here.py')
