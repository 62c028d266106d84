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

"""The install rule: installing nova-drs with the constraints of the host's
release never changes the installed nova or its libraries.

Run with the Python of a release's environment, where nova is installed as
that release ships it (``make release-2025.2``, ``make release-2026.1``,
``make release-2026.2``). The constraints file is the one of the installed
nova's release (NOVA_DRS_CONSTRAINTS overrides it). pip plans the install
(``--dry-run --report``) and the plan must leave alone nova, every library
nova requires (transitively, as installed), oslo.*, openstacksdk,
SQLAlchemy and eventlet.
"""

import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys

from packaging import requirements
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONSTRAINTS_BY_NOVA = {32: 'constraints-2025.2.txt', 33: 'constraints-2026.1.txt',
                       34: 'constraints.txt'}
#: Named by the rule whether or not nova requires them.
ALWAYS_KEPT = {'nova', 'openstacksdk', 'sqlalchemy', 'eventlet'}


def canonical(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def nova_major():
    return int(metadata.version('nova').split('.')[0])


def constraints_file():
    name = os.environ.get('NOVA_DRS_CONSTRAINTS') or CONSTRAINTS_BY_NOVA.get(nova_major())
    if name is None:
        pytest.fail('nova %s is no supported release' % metadata.version('nova'))
    return os.path.join(REPO, name)


def installed_closure(name):
    """``name`` and every distribution it requires, transitively, as installed."""
    found, pending = set(), [name]
    while pending:
        current = canonical(pending.pop())
        if current in found:
            continue
        try:
            requires = metadata.requires(current) or []
        except metadata.PackageNotFoundError:
            continue                    # an optional dependency not installed
        found.add(current)
        for line in requires:
            requirement = requirements.Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({'extra': ''}):
                pending.append(requirement.name)
    return found


def kept(name):
    return name in ALWAYS_KEPT or name.startswith('oslo-') or name in KEPT_BY_NOVA


KEPT_BY_NOVA = installed_closure('nova')


@pytest.fixture(scope='module')
def plan(tmp_path_factory):
    """pip's install report for ``pip install -c <constraints> <repo>``."""
    report = tmp_path_factory.mktemp('report') / 'report.json'
    subprocess.run([sys.executable, '-m', 'pip', 'install', '--dry-run', '--quiet',
                    '--report', str(report), '-c', constraints_file(), REPO],
                   check=True, cwd=REPO, timeout=600)
    with open(report) as handle:
        return json.load(handle)


def test_the_constraints_are_the_installed_novas_release():
    pins = {}
    with open(constraints_file()) as handle:
        for line in handle:
            if '==' in line and not line.startswith('#'):
                name, version = line.split(';')[0].strip().split('==')
                pins[canonical(name)] = version
    assert pins['nova'] == metadata.version('nova')


def installed_version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return 'not installed'


def test_installing_nova_drs_changes_no_library_of_nova(plan):
    planned = {canonical(item['metadata']['name']): item['metadata']['version']
               for item in plan['install']}
    assert 'nova-drs' in planned
    changed = {name: '%s -> %s' % (installed_version(name), version)
               for name, version in planned.items() if kept(name)}
    assert changed == {}


def test_the_rule_covers_novas_own_libraries():
    # The closure is read from the installed metadata: nova's direct
    # requirements and theirs (a guard against an empty set passing above).
    assert {'nova', 'oslo-config', 'sqlalchemy', 'keystoneauth1'} <= KEPT_BY_NOVA
