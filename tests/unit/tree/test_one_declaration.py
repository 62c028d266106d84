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

"""Every option, aggregate-metadata key and algorithm parameter is declared
once, in one place of the source tree.

The lists come from what runs (``list_opts``, ``aggregate_keys.KEYS``, the
algorithms' entry points); the declarations from the source, read as syntax
(``cfg.*Opt('name', ...)``, ``Key('name', ...)``, the keywords of
``schema.params``), so a second declaration is found even where the running
code would silently keep one of the two. An option that sets an algorithm
parameter is generated from the parameter's schema (conf/decision.py), and
no option may repeat a parameter's default and bounds by hand.
"""

import ast
import collections
import importlib
import importlib.metadata
import inspect
import pathlib

from keystoneauth1 import loading as ks_loading
from oslo_db import options as db_options

from nova_drs import aggregate_keys
from nova_drs import conf
from nova_drs import loadbalancer_plugins
from nova_drs.conf import decision
from nova_drs.tests.tempest import config as tempest_config

ROOT = pathlib.Path(__file__).resolve().parents[3]
KINDS = ('overload', 'underload', 'vm_selection', 'placement', 'policy')
#: Hand-written options whose default and bounds equal a parameter's by
#: coincidence: they count other things than that parameter.
COINCIDENCES = {
    ('loadbalancer', 'max_migrations_per_host'): 'migrations, not samples',
    ('loadbalancer', 'max_migrations_per_destination'): 'migrations, not samples',
    ('drs_stats', 'batch_timeout'): 'seconds, not samples',
}


def _where(path, node):
    return '%s:%d' % (path.relative_to(ROOT), node.lineno)


def _modules():
    """(module name, path, syntax tree) of every module of nova_drs."""
    for path in sorted((ROOT / 'nova_drs').rglob('*.py')):
        parts = list(path.relative_to(ROOT).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts.pop()
        yield '.'.join(parts), path, ast.parse(path.read_text())


def _called(node, name):
    """Whether ``node`` calls ``name`` (``name(...)`` or ``x.name(...)``)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, 'id', None)) == name


def _option_calls(tree):
    """(node, option name) of each ``cfg.*Opt('literal', ...)`` in ``tree``."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr.endswith('Opt') and node.func.attr != 'DeprecatedOpt'
                and node.args and isinstance(node.args[0], ast.Constant)):
            yield node, node.args[0].value


def _table_keys(tree, name):
    """(node, key) of the literal keys of the dict assigned to ``name``."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and any(getattr(t, 'id', None) == name for t in node.targets)):
            for key in node.value.keys:
                yield key, key.value


def _groups_of(module_name):
    """{option name: group name} of the options a module lists or registers."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:     # a planted module of the self-test
        return {}
    if module is tempest_config:
        return {opt.name: tempest_config.group.name for opt in tempest_config.opts}
    if not hasattr(module, 'list_opts') or module_name == 'nova_drs.conf.opts':
        return {}
    return {opt.name: getattr(group, 'name', group)
            for group, opts in module.list_opts() for opt in opts}


def option_declarations(modules=None):
    """{(group, option): [places]} of every option nova_drs declares: the
    literal constructors, and the keys of decision.PARAMETER_OPTIONS."""
    found = collections.defaultdict(list)
    for name, path, tree in modules or _modules():
        calls = list(_option_calls(tree))
        if name == decision.__name__:
            calls += list(_table_keys(tree, 'PARAMETER_OPTIONS'))
        if not calls:
            continue
        groups = _groups_of(name)
        for node, option in calls:
            # A command's own arguments (no group) are named after the command.
            found[(groups.get(option, 'command line of ' + name), option)].append(
                _where(path, node))
    return found


def library_options():
    """Names of the options nova-drs takes from keystoneauth and oslo.db."""
    opts = (ks_loading.get_session_conf_options() + ks_loading.get_adapter_conf_options()
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('password') + db_options.database_opts)
    return {opt.name for opt in opts}


def registered_options():
    """{(group, option)} of every option nova-drs lists, tempest's included."""
    listed = {(getattr(group, 'name', group), opt.name)
              for group, opts in conf.all_opts() for opt in opts}
    return listed | {(tempest_config.group.name, opt.name) for opt in tempest_config.opts}


def twice(declarations):
    return ['%s declared %d times: %s' % (what, len(places), ' and '.join(places))
            for what, places in sorted(declarations.items()) if len(places) > 1]


def test_every_option_has_one_declaration():
    declared = option_declarations()
    library = library_options()
    assert not twice(declared), '\n'.join(twice(declared))
    missing = sorted('[%s] %s' % pair for pair in registered_options()
                     if pair not in declared and pair[1] not in library)
    assert not missing, 'options without a declaration in nova_drs: %s' % missing


def algorithms():
    """(kind, name, class) of every algorithm: the entry points of the
    loadbalancer namespaces and the loader's rules."""
    found = [(kind, ep.name, ep.load()) for kind in KINDS
             for ep in importlib.metadata.entry_points(group='nova_drs.loadbalancer.' + kind)]
    return sorted(found + [('rule', name, cls)
                           for name, cls in loadbalancer_plugins.RULES.items()],
                  key=lambda item: item[:2])


def _owner(cls):
    """The class whose body declares the PARAMETERS ``cls`` has."""
    return next(c for c in cls.__mro__ if 'PARAMETERS' in vars(c))


def parameter_declarations(cls):
    """{parameter: [places]}: the keywords of ``schema.params`` in the body
    of the class that declares ``cls``'s PARAMETERS."""
    owner = _owner(cls)
    path = pathlib.Path(inspect.getsourcefile(owner))
    found = collections.defaultdict(list)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == owner.__name__:
            for call in ast.walk(node):
                if _called(call, 'params'):
                    for keyword in call.keywords:
                        found[keyword.arg].append('%s:%d' % (path.relative_to(ROOT),
                                                             keyword.value.lineno))
    return found


def test_every_algorithm_parameter_has_one_declaration():
    problems = []
    for kind, name, cls in algorithms():
        declared = parameter_declarations(cls)
        for parameter in cls.PARAMETERS['properties']:
            places = declared.get(parameter, [])
            if len(places) != 1:
                problems.append('%s %s parameter %s declared %d times: %s'
                                % (kind, name, parameter, len(places), places))
    assert not problems, '\n'.join(problems)


def _bounds(opt):
    return (opt.default, getattr(opt.type, 'min', None), getattr(opt.type, 'max', None))


def _schema_bounds(spec):
    return (spec['default'], spec.get('minimum'), spec.get('maximum'))


def test_the_parameter_options_are_the_parameters_schemas():
    """Each generated option has its parameter's default and bounds; every
    parameter it sets agrees; its label is the algorithm's name."""
    options = {opt.name: opt for opt in decision.decision_opts}
    names = {cls: name for _kind, name, cls in algorithms()}
    for option, targets in decision.PARAMETER_OPTIONS.items():
        for label, cls, parameter in targets:
            assert names[cls] == label, (option, label)
            spec = cls.PARAMETERS['properties'][parameter]
            assert _bounds(options[option]) == _schema_bounds(spec), (option, cls, parameter)
            assert options[option].mutable, option


def hand_written_repeats(modules=None):
    """Options written by hand whose name is a generated option's, or whose
    default and bounds are an algorithm parameter's."""
    parameters = collections.defaultdict(list)
    for kind, name, cls in algorithms():
        for parameter, spec in cls.PARAMETERS['properties'].items():
            parameters[_schema_bounds(spec)].append('%s %s %s' % (kind, name, parameter))
    generated = {option: targets[0] for option, targets in decision.PARAMETER_OPTIONS.items()}
    found = []
    for module_name, path, tree in modules or _modules():
        calls = list(_option_calls(tree))
        groups = _groups_of(module_name) if calls else {}
        for node, option in calls:
            key = (groups.get(option), option)
            if option in generated and module_name != decision.__name__:
                found.append('%s %s repeats the option generated from %s'
                             % (_where(path, node), option, generated[option][::2]))
            numeric = node.func.attr in ('IntOpt', 'FloatOpt')
            repeated = numeric and parameters.get(_literal_bounds(node))
            if repeated and key not in COINCIDENCES:
                found.append('%s %s repeats the default and bounds of the parameter %s'
                             % (_where(path, node), option, ', '.join(repeated)))
    return found


def _literal_bounds(node):
    def value(name):
        for keyword in node.keywords:
            if keyword.arg == name:
                try:
                    return ast.literal_eval(keyword.value)
                except ValueError:
                    return object()       # computed: not a hand-written literal
        return None
    return value('default'), value('min'), value('max')


def test_no_option_repeats_a_parameter_by_hand():
    found = hand_written_repeats()
    assert not found, '\n'.join(found)


def key_declarations():
    """{key name: [places]} of every ``Key(...)`` in nova_drs, the name
    evaluated in its module (a constant such as accounting.CPU_KEY)."""
    found = collections.defaultdict(list)
    for module_name, path, tree in _modules():
        calls = [node for node in ast.walk(tree)
                 if _called(node, 'Key') and node.args]
        if not calls:
            continue
        namespace = vars(importlib.import_module(module_name))
        for node in calls:
            name = eval(compile(ast.Expression(node.args[0]), str(path), 'eval'),  # noqa: S307
                        dict(namespace))
            found[name].append(_where(path, node))
            for old in _deprecated_names(node):
                found[old].append(_where(path, node) + ' (deprecated name)')
    return found


def _deprecated_names(node):
    for keyword in node.keywords:
        if keyword.arg == 'deprecated_names':
            return ast.literal_eval(keyword.value)
    return ()


def test_every_aggregate_key_has_one_declaration():
    declared = key_declarations()
    assert not twice(declared), '\n'.join(twice(declared))
    names = set(aggregate_keys.KEYS) | {old for key in aggregate_keys.KEYS.values()
                                        for old in key.deprecated_names}
    assert names == set(declared), 'keys declared outside the registry: %s' % (
        set(declared) ^ names)


def key_spellings(modules=None):
    """{key name: [places]} where a key's name is written out: a string in a
    ``Key(...)`` declaration or a module constant (``POLICY_KEY =
    'drs_policy'``, which a declaration may use: accounting.CPU_KEY)."""
    names = set(aggregate_keys.KEYS)
    found = collections.defaultdict(list)
    for _module_name, path, tree in modules or _modules():
        for node in tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and node.value.value in names):
                found[node.value.value].append(_where(path, node))
        for node in ast.walk(tree):
            if (_called(node, 'Key') and node.args and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value in names):
                found[node.args[0].value].append(_where(path, node))
    return found


def test_every_key_name_is_written_once():
    """A second spelling of a key (a constant beside its declaration) is a
    second owner, which a rename of the declaration would leave behind."""
    assert not twice(key_spellings()), '\n'.join(twice(key_spellings()))
    planted = [('nova_drs.planted', ROOT / 'nova_drs' / 'planted.py',
                ast.parse("A = 'drs_policy'\nKEYS = (Key('drs_policy', parse),)\n"
                          "OTHER = 'not a key'\n"))]
    assert twice(key_spellings(planted)), 'a planted second spelling went unnoticed'


def test_the_checks_find_a_planted_duplicate():
    """An option declared twice (oslo.config keeps one of two equal options
    silently), a parameter's option and its default and bounds written again
    by hand: each is named with both places."""
    planted = ROOT / 'nova_drs' / 'conf' / 'planted.py'
    source = ("a = cfg.IntOpt('seed', default=0)\n"
              "b = cfg.IntOpt('seed', default=0)\n"
              "c = cfg.FloatOpt('place_cpu', default=0.5)\n"
              "d = cfg.FloatOpt('fill', default=0.9, min=0.1, max=1.0)\n")
    modules = [('nova_drs.conf.planted', planted, ast.parse(source))]
    assert twice(option_declarations(modules)) == [
        "('command line of nova_drs.conf.planted', 'seed') declared 2 times: "
        'nova_drs/conf/planted.py:1 and nova_drs/conf/planted.py:2']
    assert hand_written_repeats(modules) == [
        "nova_drs/conf/planted.py:3 place_cpu repeats the option generated from "
        "('drs', 'place_now')",
        'nova_drs/conf/planted.py:4 fill repeats the default and bounds of the parameter '
        'policy drs place_now']
