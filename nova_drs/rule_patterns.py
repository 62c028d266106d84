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

"""Rule regexes whose matching time is bounded, checked before they are used.

A rule's regex is matched (``fullmatch``) against every host, aggregate and
availability-zone name each cycle with Python's backtracking ``re``, which
no timeout can interrupt. No linear-time matcher (re2) is among the
project's dependencies, so a pattern is checked on its parsed structure
instead, conservatively:

- at most ``MAX_LENGTH`` characters (the names matched are nova names, at
  most 255 characters too);
- no backreference, lookaround or conditional group (not regular);
- no repeat (``*``, ``+``, ``{m,n}``) over a part that itself repeats or
  alternates (``(a+)+``, ``(a|aa)*``): the catastrophic-backtracking shapes;
- the ways a name can be split among the pattern's repeats and alternatives
  stay below ``MAX_CHOICES`` (each variable-length repeat counts for up to
  256 ways, each alternation for its number of branches): ``.*-gpu-.*`` or
  ``rack[0-9]+-node[0-9]+-.*`` pass, ``.*.*.*.*`` does not.

With these a failing match of a 255-character name takes milliseconds at
worst. The API refuses a pattern that fails (400); the daemon disables a
stored rule that fails (written outside the API) with one warning and keeps
running the cycle.
"""

import re
from re import _constants as sre_constants
from re import _parser as sre_parse

from nova_drs import exception

#: Longest pattern accepted (the API's schema says the same).
MAX_LENGTH = 255
#: Ways a 255-character name may be split among repeats and alternatives.
MAX_CHOICES = 256 ** 3

_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
            sre_constants.POSSESSIVE_REPEAT)
_NOT_REGULAR = {
    sre_constants.GROUPREF: 'a backreference',
    sre_constants.GROUPREF_EXISTS: 'a conditional group',
    sre_constants.ASSERT: 'a lookahead or lookbehind',
    sre_constants.ASSERT_NOT: 'a negative lookahead or lookbehind',
}


def _children(op, av):
    """The sub-patterns of one parsed node."""
    if op == sre_constants.SUBPATTERN:
        return [av[-1]]
    if op == sre_constants.BRANCH:
        return list(av[1])
    if op in _REPEATS:
        return [av[2]]
    if op == sre_constants.ATOMIC_GROUP:
        return [av]
    return []


def _varies(parsed):
    """Whether ``parsed`` holds a variable repeat or an alternation."""
    for op, av in parsed:
        if op == sre_constants.BRANCH:
            return True
        if op in _REPEATS and av[0] != av[1]:
            return True
        if any(_varies(child) for child in _children(op, av)):
            return True
    return False


def _choices(parsed):
    """Ways a name can be split among the repeats and alternatives of ``parsed``."""
    total = 1
    for op, av in parsed:
        if op in _NOT_REGULAR:
            raise exception.UnsafePattern('%s is not allowed' % _NOT_REGULAR[op])
        if op in _REPEATS:
            low, high, body = av
            if high > 1 and _varies(body):
                raise exception.UnsafePattern('a repeated part that itself repeats or alternates '
                                              '(as in (a+)+ or (a|aa)*) can take exponential time')
            total *= min(high - low + 1, 256) * _choices(body)
        elif op == sre_constants.BRANCH:
            total *= sum(_choices(branch) for branch in av[1])
        else:
            for child in _children(op, av):
                total *= _choices(child)
        if total > MAX_CHOICES:
            raise exception.UnsafePattern('too many ways to split a name among its repeats and '
                                          'alternatives (at most three open-ended repeats such '
                                          'as .* or [0-9]+)')
    return total


def compile_rule(value):
    """``value`` compiled, or UnsafePattern saying why it is refused."""
    if not isinstance(value, str) or not value:
        raise exception.UnsafePattern('a pattern is a non-empty string')
    if len(value) > MAX_LENGTH:
        raise exception.UnsafePattern('longer than %d characters' % MAX_LENGTH)
    try:
        compiled = re.compile(value)
        _choices(sre_parse.parse(value))
    except (re.error, RecursionError, OverflowError) as exc:
        raise exception.UnsafePattern('invalid regular expression: %s' % exc) from None
    return compiled
