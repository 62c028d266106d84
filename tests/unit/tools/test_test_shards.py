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

"""tools/test-shards.py: a failing file's report shows its failure, not nova's chatter."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
TOOL = os.path.join(REPO, 'tools', 'test-shards.py')

FAILING = '''
def test_fails_after_noise():
    for n in range(200):
        print('2026-11-28 23:22:28,849 INFO [nova.service] noise %d' % n)
    print('2026-11-28 23:22:28,850 ERROR [nova.compute] kept')
    assert 6 == 7, 'the real failure'


def test_passes():
    pass
'''


#: Each test runs with a process per file, then with files forked from a
#: process that preloaded a module.
PRELOAD = pytest.mark.parametrize('preload', [[], ['--preload', 'json']], ids=['spawn', 'fork'])


@PRELOAD
def test_a_failing_file_reports_its_failure_and_keeps_the_whole_output(tmp_path, preload):
    (tmp_path / 'test_planted.py').write_text(FAILING)
    proc = subprocess.run([sys.executable, TOOL, '--jobs', '1'] + preload + ['test_planted.py'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'FAIL test_planted.py' in proc.stdout
    assert 'the real failure' in proc.stdout
    assert 'ERROR [nova.compute] kept' in proc.stdout
    assert 'noise 19' not in proc.stdout
    assert '200 captured DEBUG/INFO/WARNING log lines left out' in proc.stdout
    whole = (tmp_path / 'state' / 'test-shards' / 'test_planted.py.log').read_text()
    assert 'noise 199' in whole and 'the real failure' in whole
    assert 'test-shards: FAILED test_planted.py' in proc.stdout


SPINS = '''
import time


def test_spins():
    end = time.process_time() + 2
    while time.process_time() < end:
        pass
'''

SLEEPS = '''
import time


def test_sleeps():
    time.sleep(1)
'''


@PRELOAD
def test_each_file_reports_its_own_cpu_seconds(tmp_path, preload):
    """Two files at once: each line tells its own file's CPU, not the other's."""
    (tmp_path / 'test_spins.py').write_text(SPINS)
    (tmp_path / 'test_sleeps.py').write_text(SLEEPS)
    proc = subprocess.run([sys.executable, TOOL, '--jobs', '2'] + preload + ['.'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cpu = {line.split()[1]: float(line.split()[4]) for line in proc.stdout.splitlines()
           if line.startswith('ok  ')}
    assert cpu['./test_spins.py'] >= 2.0, proc.stdout
    # Both pay pytest's start (~0.5 s of CPU, more when the two start at once).
    assert cpu['./test_sleeps.py'] < cpu['./test_spins.py'] - 1.0, proc.stdout
    assert (' s of it preloading); slowest: ' if preload else ' s CPU; slowest: ') in proc.stdout


PRELOADED = """
import os
os.environ['PRELOADED_BY'] = str(os.getpid())
"""

FORKED = """
import os
import sys


def test_runs_in_a_child_of_the_preloading_process():
    assert 'preloaded' in sys.modules
    assert os.environ['PRELOADED_BY'] == str(os.getppid())
"""


def test_preloaded_modules_are_imported_once_before_each_fork(tmp_path):
    (tmp_path / 'preloaded.py').write_text(PRELOADED)
    (tmp_path / 'test_first.py').write_text(FORKED)
    (tmp_path / 'test_second.py').write_text(FORKED.replace('test_runs', 'test_also_runs'))
    proc = subprocess.run([sys.executable, TOOL, '--jobs', '1', '--preload', 'preloaded', '.'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count('1 passed') == 2, proc.stdout


def test_a_preload_that_fails_to_import_stops_with_its_error(tmp_path):
    (tmp_path / 'test_any.py').write_text('def test_any():\n    pass\n')
    proc = subprocess.run([sys.executable, TOOL, '--preload', 'no_such_module', '.'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "--preload no_such_module failed: ModuleNotFoundError: No module named " \
        "'no_such_module'" in proc.stderr, proc.stderr
