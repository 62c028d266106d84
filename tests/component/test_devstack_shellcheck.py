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

"""The devstack plugin's shell is shellcheck-clean.

shellcheck comes from Debian's package (``make component`` installs it);
without it this test fails saying so rather than skipping.
"""

import os
import shutil
import subprocess

import pytest

from tests.unit.test_devstack_shellcheck import ROOT
from tests.unit.test_devstack_shellcheck import SCRIPTS


@pytest.mark.parametrize('script', SCRIPTS, ids=lambda path: os.path.relpath(path, ROOT))
def test_shellcheck_clean(script):
    shellcheck = shutil.which('shellcheck')
    if shellcheck is None:
        pytest.fail('shellcheck is not installed: apt-get install -y shellcheck '
                    '(make component does it)', pytrace=False)
    result = subprocess.run([shellcheck, '-x', '-s', 'bash', script], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
