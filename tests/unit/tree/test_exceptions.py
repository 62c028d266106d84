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

"""The errors nova-drs raises are in one module, ``nova_drs/exception.py``.

Read as source: every class of ``nova_drs`` that derives from an error
(a base named ``...Error``, ``...Exception`` or one of exception.py's
classes) is defined there, but for the few kept next to their only users,
which exception.py's docstring names. The tempest plugin is left out: its
tests raise tempest's errors.
"""

import ast
import pathlib

from nova_drs import exception

ROOT = pathlib.Path(__file__).resolve().parents[3]

#: module:class -> why it is not in exception.py.
KEPT = {
    'nova_drs.loadbalancer.model:InvalidSnapshot': 'the core imports only itself',
    'nova_drs.daemon.evacuation:Overtaken': "the lifecycle's own control flow",
    'nova_drs.sim.twin.cloud:NovaError': "the twin's fake nova answers with it",
    'nova_drs.sim.twin.cloud:Hang': "the twin's fake nova never answers",
}


def _base_name(node):
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, 'id', '')


def _is_error(name, known):
    return name.endswith(('Error', 'Exception')) or name in known


def error_classes(sources, known):
    """``module:class`` of each class deriving from an error, in ``sources``."""
    found = set()
    for module, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef) and any(
                    _is_error(_base_name(base), known) for base in node.bases):
                found.add('%s:%s' % (module, node.name))
    return found


def _sources():
    sources = {}
    for path in sorted((ROOT / 'nova_drs').rglob('*.py')):
        parts = list(path.relative_to(ROOT).with_suffix('').parts)
        if parts[:2] == ['nova_drs', 'tests']:
            continue
        if parts[-1] == '__init__':
            parts.pop()
        sources['.'.join(parts)] = path.read_text()
    return sources


def _defined_here():
    return {name for name, value in vars(exception).items()
            if isinstance(value, type) and issubclass(value, BaseException)
            and value.__module__ == exception.__name__}


def test_every_error_class_is_in_exception_py_or_kept_for_a_reason():
    defined = _defined_here()
    assert len(defined) > 20
    found = error_classes(_sources(), defined)
    outside = {name for name in found if not name.startswith('nova_drs.exception:')}
    assert outside == set(KEPT), 'move new error classes to nova_drs/exception.py'


def test_the_kept_ones_are_named_in_exception_py():
    for name in KEPT:
        assert name.split(':')[1] in exception.__doc__, name


def test_each_error_says_when_it_is_raised():
    for name in _defined_here():
        assert (getattr(exception, name).__doc__ or '').strip(), name


def test_the_check_finds_an_error_class_anywhere():
    assert error_classes({'nova_drs.x': 'class A(exception.PowerError):\n    pass\n'
                                        'class B(ValueError):\n    pass\n'
                                        'class C(object):\n    pass\n'},
                         {'PowerError'}) == {'nova_drs.x:A', 'nova_drs.x:B'}
