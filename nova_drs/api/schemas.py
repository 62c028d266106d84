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

r"""JSON schemas of request bodies, paths and queries, validated with readable messages.

Strings follow nova's own rules (nova.api.validation.parameter_types): a
``name`` is printable characters (no control characters, no lone
surrogates, no line breaks) not starting or ending with whitespace, at most
255 characters, nova's rule for a host, flavor or aggregate name, matched
against the whole string (nova's ``$`` lets one trailing newline through);
a rule's regular expression is printable characters. Patterns end in
``\Z`` for the same reason.
"""

import re

import jsonschema
from nova.api.validation import parameter_types

from nova_drs import exception
from nova_drs import rule_patterns

FORMAT_CHECKER = jsonschema.FormatChecker()
#: Why a value fails each format, in nova's words.
FORMAT_REASONS = {
    'name': 'It must be printable characters and cannot start or end with whitespace.',
    'printable': 'It must be printable characters (no control characters or lone '
                 'surrogates).',
    'uuid': 'It is not a UUID.',
}
_NAME = re.compile(parameter_types.valid_name_regex.regex)
_PRINTABLE = re.compile(parameter_types.valid_description_regex)
_UUID = re.compile(r'[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}')


@FORMAT_CHECKER.checks('name')
def _is_name(instance):
    return not isinstance(instance, str) or bool(_NAME.fullmatch(instance))


@FORMAT_CHECKER.checks('printable')
def _is_printable(instance):
    return not isinstance(instance, str) or bool(_PRINTABLE.fullmatch(instance))


@FORMAT_CHECKER.checks('uuid')
def _is_uuid(instance):
    return not isinstance(instance, str) or bool(_UUID.fullmatch(instance))


#: A nova service host name (nova's ``name``).
HOST = {'type': 'string', 'format': 'name', 'minLength': 1, 'maxLength': 255}

#: The path parameter ``{host}`` of GET /loadbalancer/{host}.
HOST_PATH = HOST

HOST_ACTION = {
    'type': 'object',
    'properties': {'host': HOST},
    'required': ['host'],
    'additionalProperties': False,
}

#: suspend_host: ``force`` moves servers opted out of DRS too (an admin
#: outranks a server's drs:automation=disabled; refused with 409 without it).
SUSPEND_HOST = {
    'type': 'object',
    'properties': {'host': HOST, 'force': {'type': 'boolean'}},
    'required': ['host'],
    'additionalProperties': False,
}

SET_POWER = {
    'type': 'object',
    'properties': {
        'host': HOST,
        'driver': {'type': 'string', 'minLength': 1, 'maxLength': 64,
                   'pattern': r'^[A-Za-z0-9_.-]+\Z'},
        'mode': {'type': 'string', 'enum': ['s3', 'off']},
        'mac_to_wake': {
            'type': ['string', 'null'],
            'pattern': r'^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}\Z'},
        # Checked in detail against the driver's own OPTIONS schema.
        'options': {'type': 'object', 'maxProperties': 32},
    },
    'required': ['host', 'driver'],
    'additionalProperties': False,
}

SCALE_SERVER = {
    'type': 'object',
    'properties': {
        'server': {'type': 'string', 'format': 'uuid'},
        # A flavor id or name, like nova's flavorRef.
        'flavor': {'type': 'string', 'format': 'name', 'minLength': 1, 'maxLength': 255},
    },
    'required': ['server', 'flavor'],
    'additionalProperties': False,
}


RULE_TYPES = ('host', 'aggregate', 'availability_zone')

RULE = {
    'type': 'object',
    'properties': {
        'rule': {
            'type': 'object',
            'properties': {
                'type': {'type': 'string', 'enum': list(RULE_TYPES)},
                # A regular expression on a name: printable, and it compiles
                # with a bounded matching time. Checked by the controller
                # (nova_drs.rule_patterns), which names the error.
                'value': {'type': 'string', 'format': 'printable', 'minLength': 1,
                          'maxLength': rule_patterns.MAX_LENGTH},
                'allow': {'type': 'boolean'},
            },
            'required': ['type', 'value', 'allow'],
            'additionalProperties': False,
        },
    },
    'required': ['rule'],
    'additionalProperties': False,
}

PLAN_DECISION = {
    'type': 'object',
    'properties': {'plan_id': {'type': 'integer', 'minimum': 1, 'maximum': 2 ** 31 - 1}},
    'required': ['plan_id'],
    'additionalProperties': False,
}

#: Body of POST /loadbalancer/plan/action: exactly one of these keys.
PLAN_ACTIONS = {
    'approve': PLAN_DECISION,
    'reject': PLAN_DECISION,
}

#: Query of GET /loadbalancer/plan, as {name: [values]} (nova's single_param).
PLAN_QUERY = {
    'type': 'object',
    'properties': {'cluster': {'type': 'array', 'items': HOST, 'maxItems': 1}},
    'additionalProperties': False,
}

#: Query of GET /loadbalancer/plans: ?status=&cluster=&limit=1..1000.
PLAN_LIST_QUERY = {
    'type': 'object',
    'properties': {'cluster': {'type': 'array', 'items': HOST, 'maxItems': 1},
                   'status': {'type': 'array', 'maxItems': 1, 'items': {
                       'type': 'string', 'enum': ['pending', 'approved', 'rejected',
                                                  'superseded', 'executing', 'done',
                                                  'failed']}},
                   'limit': {'type': 'array', 'maxItems': 1,
                             'items': {'type': 'string', 'pattern': '^[0-9]{1,4}$'}}},
    'additionalProperties': False,
}

#: GET /loadbalancer/energy: ?since=7d|12h|30m|ISO time & cluster=aggregate.
ENERGY_QUERY = {
    'type': 'object',
    'properties': {'since': {'type': 'array', 'maxItems': 1,
                             'items': {'type': 'string', 'minLength': 1, 'maxLength': 64,
                                       'pattern': '^[0-9A-Za-z:.+-]+$'}},
                   'cluster': {'type': 'array', 'items': HOST, 'maxItems': 1}},
    'additionalProperties': False,
}

#: GET /loadbalancer/explain/...: ?cycles=N, 1..100 (range checked by the controller).
EXPLAIN_QUERY = {
    'type': 'object',
    'properties': {'cycles': {'type': 'array', 'maxItems': 1,
                              'items': {'type': 'string', 'pattern': '^[0-9]{1,6}$'}}},
    'additionalProperties': False,
}

#: A query that takes no parameters.
NO_QUERY = {'type': 'object', 'additionalProperties': False}

#: Largest id the DRS database holds (a signed 32-bit column).
MAX_ID = 2 ** 31 - 1
_ID = re.compile(r'[0-9]{1,10}')


# jsonschema repeats the whole value in these messages; a 100 kB string would
# come back in the error.
_SHORT_MESSAGES = {
    'maxLength': 'It is too long (more than {limit} characters).',
    'minLength': 'It is too short (less than {limit} characters).',
    'pattern': 'It does not match the pattern {limit}.',
    'maxItems': 'It may be given at most {limit} time(s).',
}


def _location(error, whole):
    path = '/'.join(str(part) for part in error.absolute_path)
    return path or whole


def _message(error):
    if error.validator == 'format':
        return FORMAT_REASONS[error.validator_value]
    if error.validator in _SHORT_MESSAGES:
        return _SHORT_MESSAGES[error.validator].format(limit=error.validator_value)
    message = error.message
    return message[:197] + '...' if len(message) > 200 else message


def validate(body, schema, what='field/attribute', whole='request body'):
    validator = jsonschema.Draft7Validator(schema, format_checker=FORMAT_CHECKER)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        value = repr(error.instance)
        if len(value) > 80:
            value = value[:77] + '...'
        raise exception.ValidationError('Invalid input for %s %s. Value: %s. %s'
                                        % (what, _location(error, whole), value, _message(error)))


def validate_query(query, schema):
    """``query`` is {name: [values]}; the message names the query parameter."""
    validate(query, schema, what='query parameter', whole='(query string)')


def object_id(text):
    """The integer id in a path, or None when it cannot name a row.

    Only ASCII digits: ``str.isdigit`` also accepts '²' and '①', which
    ``int`` refuses.
    """
    if not _ID.fullmatch(text):
        return None
    value = int(text)
    return value if 1 <= value <= MAX_ID else None


def single_action(body, actions):
    """(name, arguments) of a body holding exactly one of ``actions``."""
    if not isinstance(body, dict):
        raise exception.ValidationError('the request body must be a JSON object, got %s'
                                        % type(body).__name__)
    expected = ', '.join(sorted(actions))
    if len(body) != 1:
        raise exception.ValidationError('exactly one action expected (one of: %s), got %d%s'
                                        % (expected, len(body),
                                           ': ' + ', '.join(sorted(map(str, body)))
                                           if body else ''))
    (name, arguments), = body.items()
    if name not in actions:
        raise exception.ValidationError('unknown action %r; expected one of: %s'
                                        % (name[:64], expected))
    validate(arguments, actions[name])
    return name, arguments
