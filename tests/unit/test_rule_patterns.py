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

import time

import pytest

from nova_drs import exception
from nova_drs import rule_patterns


@pytest.mark.parametrize('value', [
    'compute[0-9]+', '.*-gpu-.*', 'rack[0-9]+-node[0-9]+-.*', '(gpu|cpu)-.*',
    'compute1|compute2', '(ab)+', 'x{1,1000}', 'a' * 255])
def test_usual_patterns_are_accepted(value):
    assert rule_patterns.compile_rule(value).pattern == value


@pytest.mark.parametrize('value, reason', [
    ('(a+)+$', 'exponential time'),
    ('(a*)*', 'exponential time'),
    ('(a|aa)*', 'exponential time'),
    ('(?>a+)+', 'exponential time'),
    ('(a|aa)' * 40, 'too many ways'),
    ('.*.*.*.*', 'too many ways'),
    (r'(.*)\1', 'backreference'),
    ('(?=a)a', 'lookahead'),
    ('(a)?(?(1)b|c)', 'conditional'),
    ('compute[0-9', 'invalid regular expression'),
    ('a' * 256, 'longer than 255'),
    ('', 'non-empty'),
])
def test_unbounded_or_invalid_patterns_are_refused(value, reason):
    with pytest.raises(exception.UnsafePattern, match=reason):
        rule_patterns.compile_rule(value)


def test_accepted_patterns_fail_fast_on_the_longest_names():
    """The worst accepted shape on a 255-character name that makes it backtrack."""
    worst = rule_patterns.compile_rule('.*.*.*x')
    started = time.monotonic()
    assert worst.fullmatch('a' * 255) is None
    assert time.monotonic() - started < 1.0
