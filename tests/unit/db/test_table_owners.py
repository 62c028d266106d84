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

"""Storage by entity: one module under nova_drs/db/ owns each table.

Outside nova_drs/db/ no module of nova_drs/ names an ORM
model of nova_drs/db/models.py, imports that module or names a table in a
string (``sa.table(...)``, raw SQL): tables are read and written through the
functions of their owner. Inside nova_drs/db/ every model is named by exactly
one module, models.py and the alembic migrations aside; a module that needs
another entity's table (a row lock, a subquery) calls that entity's module.
"""

import ast
import pathlib
import re

import pytest

from nova_drs.db import models as db_models

REPO = pathlib.Path(__file__).resolve().parents[3]
DB = pathlib.PurePosixPath('nova_drs/db')
MODELS = DB / 'models.py'
MODELS_MODULE = 'nova_drs.db.models'
SCANNED = ('nova_drs',)
#: Under nova_drs/db/ but no owner: the schema itself and alembic's
#: environment and revisions (they compare with, or spell out, every table).
NOT_OWNERS = (MODELS, DB / 'migrations')
#: {model: (db modules besides its owner that name it, why)}. Empty: a module
#: needing another entity's table (a lock, a subquery) calls its owner.
SHARED = {}


def tables(source):
    """{model class: table name} of models.py (the classes setting ``__tablename__``)."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.Assign) and any(
                        isinstance(target, ast.Name) and target.id == '__tablename__'
                        for target in statement.targets):
                    found[node.name] = statement.value.value
    return found


def _sql_naming(text, names):
    """The table of ``names`` a string names as a whole or after an SQL keyword."""
    if text in names:
        return text
    for name in names:
        if re.search(r'\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+[`"]?%s\b' % name, text):
            return name
    return None


def _absolute(node, path):
    """The module an ImportFrom names, relative imports resolved from ``path``."""
    if not node.level:
        return node.module or ''
    package = list(pathlib.PurePosixPath(path).parent.parts)
    base = package[:len(package) - node.level + 1]
    return '.'.join(base + ([node.module] if node.module else []))


def references(path, source, models):
    """[(line, what)]: the models ``source`` names, its imports of models.py and
    its strings naming a table (``sa.table('lb_rules')``, raw SQL)."""
    found = []
    table_names = set(models.values())
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            table = _sql_naming(node.value, table_names)
            if table:
                found.append((node.lineno, 'table ' + table))
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, path)
            if module == MODELS_MODULE or (
                    module == 'nova_drs.db' and any(a.name == 'models' for a in node.names)):
                found.append((node.lineno, 'import of ' + MODELS_MODULE))
        elif isinstance(node, ast.Import):
            if any(a.name == MODELS_MODULE for a in node.names):
                found.append((node.lineno, 'import of ' + MODELS_MODULE))
        elif isinstance(node, ast.Constant) and node.value == MODELS_MODULE:
            found.append((node.lineno, 'import of ' + MODELS_MODULE))
        elif isinstance(node, ast.Attribute) and node.attr in models:
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.Name) and node.id in models:
            found.append((node.lineno, node.id))
    return found


def violations(files, models):
    """'path:line: what' for each use of the models outside nova_drs/db/."""
    return ['%s:%d: %s' % (path, line, what)
            for path, source in files if DB not in pathlib.PurePosixPath(path).parents
            for line, what in sorted(set(references(path, source, models)))]


def owners(files, models):
    """{model: {db modules naming it}} over the owner candidates of ``files``."""
    found = {model: set() for model in models}
    model_of = {'table ' + table: model for model, table in models.items()}
    for path, source in files:
        pure = pathlib.PurePosixPath(path)
        if DB not in pure.parents or any(pure == n or n in pure.parents for n in NOT_OWNERS):
            continue
        for _line, what in references(path, source, models):
            model = model_of.get(what, what)
            if model in found:
                found[model].add(str(pure))
    return found


def ownership_errors(found):
    errors = []
    for model, modules in sorted(found.items()):
        allowed = set(SHARED.get(model, ((), ''))[0])
        owned = modules - allowed
        if len(owned) != 1:
            errors.append('%s is named by %s in nova_drs/db/, not by exactly one module'
                          % (model, sorted(owned) or 'no module'))
    return errors


def _repository_files():
    for top in SCANNED:
        for path in sorted((REPO / top).rglob('*.py')):
            yield path.relative_to(REPO).as_posix(), path.read_text()


@pytest.fixture(scope='module')
def models():
    """{model class: table name}, as parsed; it is what SQLAlchemy maps."""
    found = tables((REPO / MODELS).read_text())
    assert found == {mapper.class_.__name__: mapper.local_table.name
                     for mapper in db_models.Base.registry.mappers}
    return found


@pytest.fixture(scope='module')
def files():
    return list(_repository_files())


def test_no_model_is_used_outside_nova_drs_db(files, models):
    found = violations(files, models)
    assert not found, ('tables are read and written through their module under '
                       'nova_drs/db/; call (or add) a function there instead of:\n'
                       + '\n'.join(found))


def test_each_model_has_exactly_one_owner_in_nova_drs_db(files, models):
    errors = ownership_errors(owners(files, models))
    assert not errors, '\n'.join(errors)


def test_the_scanner_finds_a_violation(models):
    """The checks above can fail: synthetic sources in place of the repository's."""
    bad = ('from nova_drs.db import models\n'
           'from nova_drs.db.models import LbRule as Rule\n'
           'from ..db import models as m\n'
           'import nova_drs.db.models\n'
           'def rules(session):\n'
           '    return session.query(models.LbRule).all()\n'
           'def hosts(session):\n'
           '    session.execute(sa.text("DELETE FROM lb_requests WHERE id = 1"))\n'
           '    return session.execute(sa.select(sa.table("drs_hosts"))).all()\n')
    found = violations([('nova_drs/api/fake.py', bad),
                        ('nova_drs/db/fake.py', bad)], models)
    assert found == ['nova_drs/api/fake.py:1: import of nova_drs.db.models',
                     'nova_drs/api/fake.py:2: import of nova_drs.db.models',
                     'nova_drs/api/fake.py:3: import of nova_drs.db.models',
                     'nova_drs/api/fake.py:4: import of nova_drs.db.models',
                     'nova_drs/api/fake.py:6: LbRule',
                     'nova_drs/api/fake.py:8: table lb_requests',
                     'nova_drs/api/fake.py:9: table drs_hosts']
    assert violations([('nova_drs/novaclient_ext/fake.py', 'x = Foo.DrsHost.__table__\n')],
                      models) == ['nova_drs/novaclient_ext/fake.py:1: DrsHost']
    assert violations([('nova_drs/api/fake.py', 'from nova_drs.db import rules\n'
                        '"""Rules read from lb_rules by rules.list_all."""\n'
                        'rules.list_all(database)\n')], models) == []


def test_the_owner_check_finds_a_second_owner_and_a_missing_one(models):
    uses = 'from nova_drs.db import models\nTABLE = models.{}.__table__\n'.format
    files = [('nova_drs/db/a.py', uses('LbRule')),
             ('nova_drs/db/b.py', 'q = sa.text("SELECT * FROM lb_rules")\n'),
             ('nova_drs/db/models.py', uses('LbPlan')),
             ('nova_drs/db/migrations/env.py', uses('LbPlan'))]
    errors = ownership_errors(owners(files, {'LbRule': 'lb_rules', 'LbPlan': 'lb_plans'}))
    assert errors == [
        "LbPlan is named by no module in nova_drs/db/, not by exactly one module",
        "LbRule is named by ['nova_drs/db/a.py', 'nova_drs/db/b.py'] in nova_drs/db/, "
        "not by exactly one module"]
    assert ownership_errors(owners(files[:1], {'LbRule': 'lb_rules'})) == []
