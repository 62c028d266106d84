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

"""JSON schemas of the algorithms' parameters (Watcher-style), as plain dicts.

Every algorithm class declares ``PARAMETERS = schema.params(...)``: name,
type, bounds, default and unit of each constructor parameter. The API and
``openstack drs policy list`` show them, and ``nova_drs.loadbalancer_plugins``
validates values against them before building an algorithm. Components (a
detector handed to a placement, say) are not parameters. ``@algorithm``
makes the parameters the class's fields, so each default is written once.
"""

import dataclasses

_PYTHON_TYPES = {'number': float, 'integer': int, 'null': type(None)}


def params(**properties):
    return {'type': 'object', 'properties': properties, 'additionalProperties': False}


def _property(kind, default, description, unit, minimum, maximum, nullable):
    prop = {'type': [kind, 'null'] if nullable else kind, 'minimum': minimum,
            'default': default, 'unit': unit, 'description': description}
    if maximum is not None:
        prop['maximum'] = maximum
    return prop


def number(default, description, unit, minimum=0.0, maximum=None, nullable=False):
    return _property('number', default, description, unit, minimum, maximum, nullable)


def fraction(default, description, minimum=0.0, maximum=1.0):
    return number(default, description, 'fraction of capacity', minimum, maximum)


def integer(default, description, unit, minimum=1, maximum=None, nullable=False):
    return _property('integer', default, description, unit, minimum, maximum, nullable)


NONE = params()


def algorithm(cls):
    """``cls`` as a dataclass whose fields are its PARAMETERS, with their defaults."""
    fields = {}
    for name, spec in cls.PARAMETERS['properties'].items():
        kinds = spec['type'] if isinstance(spec['type'], list) else [spec['type']]
        annotation = _PYTHON_TYPES[kinds[0]]
        for kind in kinds[1:]:
            annotation = annotation | _PYTHON_TYPES[kind]
        fields[name] = annotation
        setattr(cls, name, spec['default'])
    cls.__annotations__ = fields
    return dataclasses.dataclass(eq=False)(cls)
