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

"""nova-drs-sim refuses unusable output paths and sample counts before the run."""

import pytest

from nova_drs.cmd import sim


@pytest.fixture
def day(tmp_path):
    directory = tmp_path / 'day'
    directory.mkdir()
    (directory / 'vm1').write_text('10\n' * 6)
    (tmp_path / 'file').write_text('a regular file\n')
    return directory


@pytest.mark.parametrize('extra, message', [
    (['--report', '{tmp}/file/report'], 'nova-drs-sim: error: --report {tmp}/file/report: '
                                        'Not a directory'),
    (['--json', '{tmp}'], 'nova-drs-sim: error: --json {tmp} is a directory'),
])
def test_unusable_output_is_one_line_before_the_run(day, capsys, extra, message):
    tmp = str(day.parent)
    argv = [str(day), '--samples', '6', '--no-progress'] + [a.format(tmp=tmp) for a in extra]

    assert sim.main(argv) == 2

    out, err = capsys.readouterr()
    assert err.splitlines() == [message.format(tmp=tmp)]
    assert out == ''  # refused before simulating, not after


def test_samples_below_one_is_a_usage_error(day, capsys):
    with pytest.raises(SystemExit) as exit_:
        sim.main([str(day), '--samples', '0'])

    assert exit_.value.code == 2
    assert '--samples must be at least 1' in capsys.readouterr().err
