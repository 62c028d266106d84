"""JSON schemas of request bodies, and validation with readable messages."""

import jsonschema

HOST = {
    'type': 'string', 'minLength': 1, 'maxLength': 255,
    # No leading/trailing blanks, no line breaks: a nova service host name.
    'pattern': r'^\S(.*\S)?$',
}

HOST_ACTION = {
    'type': 'object',
    'properties': {'host': HOST},
    'required': ['host'],
    'additionalProperties': False,
}

SET_POWER = {
    'type': 'object',
    'properties': {
        'host': HOST,
        'driver': {'type': 'string', 'minLength': 1, 'maxLength': 64,
                   'pattern': r'^[A-Za-z0-9_.-]+$'},
        'mode': {'type': 'string', 'enum': ['s3', 'off']},
        'mac_to_wake': {
            'type': ['string', 'null'],
            'pattern': r'^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$'},
        # Checked in detail against the driver's own OPTIONS schema.
        'options': {'type': 'object', 'maxProperties': 32},
    },
    'required': ['host', 'driver'],
    'additionalProperties': False,
}

SCALE_SERVER = {
    'type': 'object',
    'properties': {
        'server': {'type': 'string', 'format': 'uuid',
                   'pattern': r'^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$'},
        # A flavor id or name, like nova's flavorRef.
        'flavor': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                   'pattern': r'^\S(.*\S)?$'},
    },
    'required': ['server', 'flavor'],
    'additionalProperties': False,
}

#: Body of POST /loadbalancer/action: exactly one of these keys.
HOST_ACTIONS = {
    'suspend_host': HOST_ACTION,
    'unsuspend_host': HOST_ACTION,
    'wake_test': HOST_ACTION,
    'set_power': SET_POWER,
    'scale_server': SCALE_SERVER,
}

RULE_TYPES = ('host', 'aggregate', 'availability_zone')

RULE = {
    'type': 'object',
    'properties': {
        'rule': {
            'type': 'object',
            'properties': {
                'type': {'type': 'string', 'enum': list(RULE_TYPES)},
                'value': {'type': 'string', 'minLength': 1, 'maxLength': 255},
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


class ValidationError(ValueError):
    """The body does not match its schema; the message says where and why."""


class Malformed:
    """A request body that is not JSON; validating it raises its message."""

    def __init__(self, message):
        self.message = message


# jsonschema repeats the whole value in these messages; a 100 kB string would
# come back in the error.
_SHORT_MESSAGES = {
    'maxLength': 'It is too long (more than {limit} characters).',
    'minLength': 'It is too short (less than {limit} characters).',
    'pattern': 'It does not match the pattern {limit}.',
}


def _location(error):
    path = '/'.join(str(part) for part in error.absolute_path)
    return path or 'request body'


def validate(body, schema):
    if isinstance(body, Malformed):
        raise ValidationError(body.message)
    validator = jsonschema.Draft7Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        value = repr(error.instance)
        if len(value) > 80:
            value = value[:77] + '...'
        if error.validator in _SHORT_MESSAGES:
            message = _SHORT_MESSAGES[error.validator].format(limit=error.validator_value)
        else:
            message = error.message
        if len(message) > 200:
            message = message[:197] + '...'
        raise ValidationError('Invalid input for field/attribute %s. Value: %s. %s'
                              % (_location(error), value, message))


def single_action(body, actions):
    """(name, arguments) of a body holding exactly one of ``actions``."""
    if isinstance(body, Malformed):
        raise ValidationError(body.message)
    if not isinstance(body, dict):
        raise ValidationError('the request body must be a JSON object, got %s'
                              % type(body).__name__)
    expected = ', '.join(sorted(actions))
    if len(body) != 1:
        raise ValidationError('exactly one action expected (one of: %s), got %d%s'
                              % (expected, len(body),
                                 ': ' + ', '.join(sorted(map(str, body))) if body else ''))
    (name, arguments), = body.items()
    if name not in actions:
        raise ValidationError('unknown action %r; expected one of: %s' % (name[:64], expected))
    validate(arguments, actions[name])
    return name, arguments
