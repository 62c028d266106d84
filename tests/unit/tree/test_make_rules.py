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

"""What the README says of the Makefile's venvs: each is installed through
its release's one constraints file, and the rules' processes write byte-code
whatever the caller's environment says (make, dry runs only)."""

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
#: venv stamp -> the constraints file its installs must name.
VENVS = {'.venv/.installed-stamp': 'constraints.txt',
         '.venv/.docs-installed-stamp': 'constraints.txt',
         '.venv-2026.1/.installed-stamp': 'constraints-2026.1.txt',
         '.venv-2025.2/.installed-stamp': 'constraints-2025.2.txt'}


def _make(*args, env=None):
    return subprocess.run(['make', '--no-print-directory', '-C', ROOT] + list(args),
                          capture_output=True, text=True, check=True, env=env).stdout


@pytest.mark.parametrize('stamp', sorted(VENVS))
def test_every_install_of_a_venv_names_its_releases_constraints(stamp):
    # -B prints every recipe the stamp depends on; -o leaves .venv's out.
    keep_main_venv = ['-o', '.venv/.installed-stamp'] if stamp != '.venv/.installed-stamp' else []
    recipe = _make('-n', '-B', *keep_main_venv, stamp)
    installs = [line for line in recipe.splitlines() if re.search(r'\bpip install\b', line)]
    bootstrap = re.compile(r'install -q (uv==\S+|.*--upgrade pip)$')
    packages = [line for line in installs if not bootstrap.search(line)]
    assert packages, recipe
    for line in packages:
        assert ' -c %s ' % VENVS[stamp] in line, line


def test_the_rules_write_byte_code_whatever_the_environment_says(tmp_path):
    probe = tmp_path / 'probe.mk'
    probe.write_text('probe:\n\t@echo "[$$PYTHONDONTWRITEBYTECODE]"\n')
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    assert _make('-s', '-f', 'Makefile', '-f', str(probe), 'probe', env=env).strip() == '[]'
