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

"""Imports point one way: down the layers, and never round in a cycle.

A module that imports one of a higher layer drags the higher layer into
every process that uses the lower one (the scheduler filters would load the
daemon, the options would load the database) and makes the order in which
modules initialise a matter of luck. Every module of ``nova_drs`` is read as
source (no import), imports inside functions included: a lazy import is
still a dependency, it only moves the failure to run time.

Layers are numbered from the bottom. A module may import modules of its own
unit (the table's key it falls under, the longest that matches) and of lower
layers; units that share a layer are siblings and do not import each other.
"""

import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]

#: unit (a package or module of nova_drs, the longest matching key wins) ->
#: layer. Each unit's comment says what it may import and why.
LAYERS = {
    # 0, leaves: import nothing of nova_drs outside themselves.
    'nova_drs': 0,                   # the namespace only
    # the errors every layer raises and catches (stdlib only, as nova's)
    'nova_drs.exception': 0,
    # 1, import nothing of nova_drs but the errors.
    'nova_drs.loadbalancer': 1,      # the pure decision core: no conf, no I/O
    'nova_drs.power': 1,             # BMC drivers, configured by arguments
    'nova_drs.rule_patterns': 1,     # allow/deny pattern syntax
    'nova_drs.membership': 1,        # which aggregates a host is in (pure)
    # 2, options, read by every layer above; the algorithm parameters'
    # options are generated from the core's schemas (conf/decision.py), so
    # each default and bound is declared once.
    'nova_drs.conf': 2,
    # 2, value vocabularies that aggregate metadata is checked against.
    'nova_drs.observability.power_model': 2,  # power curves: the core's model
    'nova_drs.overcommit.accounting': 2,      # ratio limits and arithmetic
    # 3, storage and the readings of aggregate metadata and flavors.
    'nova_drs.db': 3,                # tables; rows become the core's model
    'nova_drs.aggregate_keys': 3,    # metadata keys, checked with layer 2
    'nova_drs.opt_out': 3,           # servers' drs:automation, on the model
    'nova_drs.loadbalancer_plugins': 3,  # stevedore names of core algorithms
    'nova_drs.client': 3,            # REST client of the API; power option names
    # placement usages on every supported openstacksdk: openstack only, so the
    # overcommit sync (4) and the daemon's client (5) share the one call.
    'nova_drs.clients.placement_usages': 3,
    # 4, what the services share, on top of storage and metadata.
    'nova_drs.cluster_policy': 4,    # a host's policy, from aggregate_keys
    'nova_drs.overcommit': 4,        # ratios per aggregate, stored in db
    'nova_drs.observability': 4,     # metrics and energy, read from db
    'nova_drs.osc': 4,               # openstack CLI plugin, on the client
    'nova_drs.novaclient_ext': 4,    # nova CLI extension (nova lb-*), on the client
    # 5, services on layer 4.
    'nova_drs.stats': 5,             # collector: db, overcommit, metrics
    'nova_drs.scheduling': 5,        # the scheduler's view of requests
    # REST clients of nova and placement (openstacksdk), used by the daemon,
    # the scale executor and the commands; they count calls in the metrics.
    'nova_drs.clients': 5,
    # 6, features the entry points compose.
    'nova_drs.scale': 6,             # resizing servers through nova_api
    'nova_drs.resources': 6,         # compute-node monitor publishing stats
    # 7, what runs inside nova's processes or as the daemon: siblings.
    'nova_drs.api': 7,               # nova-api extension
    'nova_drs.filters': 7,           # nova-scheduler filters
    'nova_drs.weights': 7,           # nova-scheduler weighers
    'nova_drs.daemon': 7,            # nova-loadbalancer
    # 8, the simulator: its digital twin runs the real daemon on a fake cloud.
    'nova_drs.sim': 8,
    # 9, the top: commands wire everything; the tempest plugin tests a cloud.
    'nova_drs.cmd': 9,
    'nova_drs.tests': 9,
}

#: unit -> the only units that may import it (besides itself), a sharper
#: statement of the direction than the numbers alone.
ONLY_IMPORTED_BY = {
    'nova_drs.cmd': set(),
    # The commands start the daemon; the simulator's twin runs it.
    'nova_drs.daemon': {'nova_drs.cmd', 'nova_drs.sim'},
}


def module_name(path, root=ROOT):
    parts = list(path.relative_to(root).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _modules():
    """{module name: source} of every module of nova_drs."""
    return {module_name(path): path.read_text()
            for path in sorted((ROOT / 'nova_drs').rglob('*.py'))}


def _targets(node, name, is_package, known):
    """nova_drs modules an Import/ImportFrom node names (``from p import m``
    names module ``p.m`` when there is one, else ``p``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split('.')[0] == 'nova_drs']
    base = node.module or ''
    if node.level:
        package = name.split('.') if is_package else name.split('.')[:-1]
        package = package[:len(package) - node.level + 1]
        base = '.'.join(package + ([node.module] if node.module else []))
    if base.split('.')[0] != 'nova_drs':
        return []
    return [base + '.' + alias.name if base + '.' + alias.name in known else base
            for alias in node.names]


def _import_nodes(tree, module_level_only):
    """Import nodes; ``module_level_only`` skips function bodies (those run
    later, so they cannot take part in an import-time cycle)."""
    pending = list(ast.iter_child_nodes(tree))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif not (module_level_only and isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))):
            pending.extend(ast.iter_child_nodes(node))


def import_graph(sources, module_level_only=False):
    """{module: {(imported module, line)}} over ``sources`` ({name: source})."""
    graph = {}
    for name, source in sources.items():
        tree = ast.parse(source)
        is_package = _is_package(name, sources)
        edges = set()
        for node in _import_nodes(tree, module_level_only):
            for target in _targets(node, name, is_package, sources):
                if target != name:
                    edges.add((target, node.lineno))
        graph[name] = edges
    return graph


def _is_package(name, sources):
    """Whether ``name`` has submodules, so its relative imports start at it."""
    prefix = name + '.'
    return any(other.startswith(prefix) for other in sources)


def unit(module):
    """The LAYERS key ``module`` falls under (the longest that matches)."""
    parts = module.split('.')
    for end in range(len(parts), 0, -1):
        candidate = '.'.join(parts[:end])
        if candidate in LAYERS:
            return candidate
    raise AssertionError('%s is in no layer: add it to LAYERS' % module)


def violations(graph):
    """One line per import that points up, sideways or to a guarded unit."""
    found = []
    for module, edges in sorted(graph.items()):
        source = unit(module)
        for target, line in sorted(edges):
            destination = unit(target)
            if destination == source:
                continue
            where = '%s:%d imports %s' % (module, line, target)
            allowed = ONLY_IMPORTED_BY.get(destination)
            if LAYERS[destination] >= LAYERS[source]:
                found.append('%s: layer %d (%s) may not import layer %d (%s)' % (
                    where, LAYERS[source], source, LAYERS[destination], destination))
            elif allowed is not None and source not in allowed:
                found.append('%s: only %s may import %s' % (
                    where, ', '.join(sorted(ONLY_IMPORTED_BY[destination])) or 'itself',
                    destination))
    return found


def _strongly_connected(graph):
    """Tarjan's components of more than one module, iteratively."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return components


def _a_cycle(graph, component):
    """A shortest cycle through the component's first module, as a path."""
    start = min(component)
    previous = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node]):
            if child == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return path[::-1] + [start]
            if child in component and child not in previous:
                previous[child] = node
                queue.append(child)
    raise AssertionError('no cycle through %s' % start)  # not a component


def cycles(graph):
    """Each import cycle among modules, as 'a -> b -> a'."""
    plain = {module: {target for target, _line in edges if target in graph}
             for module, edges in graph.items()}
    return [' -> '.join(_a_cycle(plain, component))
            for component in _strongly_connected(plain)]


def test_every_module_is_in_a_layer():
    assert [module for module in _modules() if not _safe_unit(module)] == []


def _safe_unit(module):
    try:
        return unit(module)
    except AssertionError:
        return None


def test_imports_point_down_the_layers():
    graph = import_graph(_modules())
    assert len(graph) > 100, 'no module found under %s' % ROOT
    found = violations(graph)
    assert not found, 'imports that point up:\n' + '\n'.join(found)


def test_no_import_cycle_among_module_level_imports():
    found = cycles(import_graph(_modules(), module_level_only=True))
    assert not found, 'import cycles:\n' + '\n'.join(found)


def test_the_checks_find_an_upward_import_and_a_cycle():
    sources = {
        'nova_drs.conf': 'import nova_drs.daemon\n',
        'nova_drs.daemon': 'def f():\n    from nova_drs import cmd\n',
        'nova_drs.cmd': 'from nova_drs import conf\n',
        'nova_drs.db.a': 'from nova_drs.db import b\n',
        'nova_drs.db.b': 'from . import a\n',
    }
    graph = import_graph(sources)
    assert violations(graph) == [
        'nova_drs.conf:1 imports nova_drs.daemon: layer 2 (nova_drs.conf) '
        'may not import layer 7 (nova_drs.daemon)',
        'nova_drs.daemon:2 imports nova_drs.cmd: layer 7 (nova_drs.daemon) '
        'may not import layer 9 (nova_drs.cmd)',
    ]
    assert cycles(graph) == ['nova_drs.cmd -> nova_drs.conf -> nova_drs.daemon -> '
                             'nova_drs.cmd', 'nova_drs.db.a -> nova_drs.db.b -> nova_drs.db.a']
    # The daemon's import of cmd is inside a function: it runs too late to
    # be an import-time cycle, but it is still an upward import.
    assert cycles(import_graph(sources, module_level_only=True)) == [
        'nova_drs.db.a -> nova_drs.db.b -> nova_drs.db.a']


def test_only_the_listed_units_import_a_guarded_one():
    graph = import_graph({'nova_drs.sim': 'from nova_drs.daemon import service\n',
                          'nova_drs.daemon.service': '',
                          'nova_drs.tests': 'from nova_drs.daemon import service\n'})
    assert violations(graph) == [
        'nova_drs.tests:1 imports nova_drs.daemon.service: only nova_drs.cmd, '
        'nova_drs.sim may import nova_drs.daemon']
