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

"""The shipped systemd units (etc/systemd) are valid for systemd-analyze."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.unit.tree.test_systemd_units import INSTALLED_BIN
from tests.unit.tree.test_systemd_units import NAMES
from tests.unit.tree.test_systemd_units import UNITS


@pytest.mark.parametrize('name', NAMES)
def test_systemd_analyze_verify_passes(name, tmp_path):
    """systemd checks the binary exists: the unit is verified with ExecStart
    pointing at this venv's script, as a drop-in would for a virtualenv."""
    analyze = shutil.which('systemd-analyze')
    if analyze is None:
        pytest.fail('systemd-analyze not found (Debian: apt-get install systemd)')
    text = open(os.path.join(UNITS, name + '.service')).read()
    assert 'ExecStart=%s/%s ' % (INSTALLED_BIN, name) in text
    unit = tmp_path / (name + '.service')
    unit.write_text(text.replace(INSTALLED_BIN, os.path.dirname(sys.executable)))
    result = subprocess.run([analyze, 'verify', str(unit)], capture_output=True, text=True,
                            timeout=60)
    assert (result.returncode, result.stdout + result.stderr) == (0, '')
