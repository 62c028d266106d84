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


def test_a_failing_file_reports_its_failure_and_keeps_the_whole_output(tmp_path):
    (tmp_path / 'test_planted.py').write_text(FAILING)
    proc = subprocess.run([sys.executable, TOOL, '--jobs', '1', 'test_planted.py'],
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


def test_each_file_reports_its_own_cpu_seconds(tmp_path):
    """Two files at once: each line tells its own file's CPU, not the other's."""
    (tmp_path / 'test_spins.py').write_text(SPINS)
    (tmp_path / 'test_sleeps.py').write_text(SLEEPS)
    proc = subprocess.run([sys.executable, TOOL, '--jobs', '2', '.'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cpu = {line.split()[1]: float(line.split()[4]) for line in proc.stdout.splitlines()
           if line.startswith('ok  ')}
    assert cpu['./test_spins.py'] >= 2.0, proc.stdout
    # Both pay pytest's start (~0.5 s of CPU, more when the two start at once).
    assert cpu['./test_sleeps.py'] < cpu['./test_spins.py'] - 1.0, proc.stdout
    assert ' s CPU; slowest: ' in proc.stdout
