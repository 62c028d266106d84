"""Every non-empty Python file carries the Apache 2.0 header (setup.cfg: Apache-2.0)."""

import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
MARK = 'Licensed under the Apache License, Version 2.0'


def test_every_python_file_has_the_licence_header():
    files = subprocess.run(['git', 'ls-files', '*.py'], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    assert len(files) > 100
    missing = []
    for path in files:
        with open(os.path.join(REPO, path)) as handle:
            text = handle.read()
        if text.strip() and MARK not in text[:2000]:
            missing.append(path)
    assert not missing, 'no licence header (tools: add it as the others do): %s' % missing


def test_licence_file_is_apache_2():
    with open(os.path.join(REPO, 'LICENSE')) as handle:
        assert 'Apache License' in handle.read(200)
