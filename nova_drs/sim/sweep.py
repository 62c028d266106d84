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

"""Parameter sweeps: ``name=v1,v2`` specs expand to a cartesian product."""

import itertools


def parse(specs):
    """['underload=0.6,0.7', 'window=12'] -> list of parameter dicts."""
    axes = []
    for spec in specs:
        name, sep, values = spec.partition('=')
        if not sep or not name or not values:
            raise ValueError('bad --sweep %r: expected name=value[,value...]' % spec)
        try:
            axes.append([(name, _number(v)) for v in values.split(',')])
        except ValueError:
            raise ValueError('bad --sweep %r: values must be numbers' % spec) from None
    return [dict(combo) for combo in itertools.product(*axes)] if axes else [None]


def _number(text):
    return int(text) if text.strip().isdigit() else float(text)
