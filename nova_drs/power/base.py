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

"""Interface of the host power drivers the loadbalancer daemon calls.

A driver only *issues* a command: ``suspend()`` returns once the BMC, the
host or the network accepted the request, ``wake()`` once the power-on
request or magic packet went out. Neither waits for the host to get there.
Confirming that a host is really down (``status()``) or really back (its
nova-compute service reports up) is the daemon's job; writing ``suspended``
or ``active`` right after a fire-and-forget call was a fault of the 2015
implementation.

Per-host settings come from the ``drs_hosts`` row: ``power_driver`` (the
stevedore name), ``power_mode`` (``s3`` = keep memory, ``off`` = S5),
``power_options`` (JSON, checked against the driver's ``OPTIONS`` schema)
and ``mac_to_wake``. The schema is the one owner of which options are
secret: a property marked ``"secret": true`` is stored sealed for the daemon
(``power/sealing.py``) and never shown: not in ``PowerTarget``'s repr, not in
``redact()``'s output, not in a ``PowerError`` message. Only an option no
schema describes (a nested dict of an unknown driver) is judged by its name.
"""

import abc
import contextlib
import copy
import dataclasses
import json
import math

import jsonschema

from nova_drs import exception

MODE_S3 = 's3'
MODE_OFF = 'off'
MODES = (MODE_S3, MODE_OFF)

ON = 'on'
OFF = 'off'
SUSPENDED = 'suspended'
UNKNOWN = 'unknown'
STATUSES = (ON, OFF, SUSPENDED, UNKNOWN)

REDACTED = '***'

_SECRET_WORDS = ('password', 'passwd', 'passphrase', 'secret', 'token', 'private_key')
_SECRET_NAMES = ('kg',)


def _looks_secret(key):
    name = str(key).lower()
    if name.endswith('_file'):
        return False
    return name in _SECRET_NAMES or any(word in name for word in _SECRET_WORDS)


def is_secret(key, schema):
    """Whether option ``key`` is secret: its schema says so (``"secret": true``);
    an option the schema does not describe is secret when named like a password."""
    prop = ((schema or {}).get('properties') or {}).get(key)
    if prop is None:
        return _looks_secret(key)
    return bool(prop.get('secret'))


def child_schema(key, schema):
    """The schema of option ``key`` of ``schema`` (None if it has none)."""
    return ((schema or {}).get('properties') or {}).get(key)


def redact(options, schema=None):
    """Copy of ``options`` with every secret value replaced by ``'***'``.

    Secret = marked ``"secret": true`` in ``schema`` or named like a
    password, at any depth. Safe to return from the API or to log.
    """
    if not isinstance(options, dict):
        return options
    shown = {}
    for key, value in options.items():
        if is_secret(key, schema):
            shown[key] = REDACTED
        elif isinstance(value, dict):
            shown[key] = redact(value, child_schema(key, schema))
        else:
            shown[key] = copy.deepcopy(value)
    return shown


def secret_values(options, schema=None):
    """Every secret string in ``options``: what ``scrub`` removes from messages."""
    found = set()
    if not isinstance(options, dict):
        return found
    for key, value in options.items():
        if is_secret(key, schema):
            if value not in (None, ''):
                found.add(str(value))
        elif isinstance(value, dict):
            found |= secret_values(value, child_schema(key, schema))
    return found


def scrub(text, secrets):
    """``text`` with every secret replaced by ``'***'`` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _describe_schema_error(error):
    where = '.'.join(str(part) for part in error.absolute_path)
    prefix = 'option %r' % where if where else 'options'
    validator, expected = error.validator, error.validator_value
    if validator in ('required', 'additionalProperties'):
        # These messages name keys only, never values.
        return '%s: %s' % (prefix, error.message)
    if validator == 'type':
        return '%s must be of type %s' % (prefix, expected)
    if validator == 'enum':
        return '%s must be one of %s' % (prefix, ', '.join(map(str, expected)))
    if validator in ('minimum', 'maximum'):
        return '%s must be %s %s' % (prefix, '>=' if validator == 'minimum' else '<=',
                                     expected)
    if validator in ('minLength', 'maxLength'):
        return '%s must be %s %s characters long' % (
            prefix, 'at least' if validator == 'minLength' else 'at most', expected)
    if validator == 'pattern':
        return '%s does not match %s' % (prefix, expected)
    return '%s fails the %s check' % (prefix, validator)


#: Strings the API turns into a JSON boolean for a ``"type": "boolean"`` option.
_BOOLEANS = {'true': True, 'yes': True, '1': True, 'on': True,
             'false': False, 'no': False, '0': False, 'off': False}


def _coerced(value, expected):
    """``value`` (a string) as the schema's integer/number/boolean, else unchanged."""
    try:
        if expected == 'integer':
            return int(value.strip())
        if expected == 'number':
            number = float(value)
            return number if math.isfinite(number) else value
    except ValueError:
        return value
    if expected == 'boolean':
        return _BOOLEANS.get(value.strip().lower(), value)
    return value


def coerce_options(options, schema):
    """``options`` with string values typed as ``schema`` declares them.

    Both CLIs (and curl users with a form in mind) send ``port=623`` as the
    string ``"623"``; the driver's schema is the one owner of types, so the
    API converts strings of integer, number and boolean options before
    validating. A value already of the right type, or a string that does not
    convert, is left for ``validate_options`` to accept or refuse.
    """
    if not isinstance(options, dict):
        return options
    typed = {}
    for key, value in options.items():
        prop = child_schema(key, schema) or {}
        if isinstance(value, dict):
            typed[key] = coerce_options(value, prop)
        elif isinstance(value, str) and prop.get('type') in ('integer', 'number', 'boolean'):
            typed[key] = _coerced(value, prop['type'])
        else:
            typed[key] = value
    return typed


def validate_options(options, schema):
    """Raise PowerError naming every option of ``options`` the schema rejects.

    The message names options and the rule they break, never their values,
    so a wrongly typed password is not echoed back.
    """
    if not isinstance(options, dict):
        raise exception.PowerError('power options must be a JSON object')
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(options),
                    key=lambda error: list(map(str, error.absolute_path)))
    if errors:
        raise exception.PowerError('invalid power options: %s'
                                   % '; '.join(_describe_schema_error(error) for error in errors))


def parse_options(raw, host):
    """The ``power_options`` column (JSON text, dict or None) as a dict."""
    if raw is None or raw == '':
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        options = json.loads(raw)
    except (TypeError, ValueError):
        # The text may hold a password: do not quote it.
        raise exception.PowerError('power options of host %s are not valid JSON' % host) from None
    if not isinstance(options, dict):
        raise exception.PowerError('power options of host %s must be a JSON object' % host)
    return options


@dataclasses.dataclass(frozen=True)
class PowerTarget:
    """What a driver needs to know about one host.

    ``name`` is the nova-compute service host, ``mac`` the ``mac_to_wake``,
    ``options`` the host's ``power_options`` (left out of the repr: they may
    hold secrets), ``mode`` ``s3`` or ``off``.
    """

    name: str
    mac: str | None = None
    options: dict = dataclasses.field(default_factory=dict, repr=False)
    mode: str = MODE_OFF

    def __post_init__(self):
        if self.mode not in MODES:
            raise exception.PowerError('power mode of host %s must be one of %s, not %r'
                                       % (self.name, ', '.join(MODES), self.mode))

    @classmethod
    def from_host(cls, row):
        """Build from a ``drs_hosts`` row (model object or mapping)."""
        if isinstance(row, dict):
            field = row.get
        else:
            def field(name):
                return getattr(row, name, None)
        name = field('host')
        return cls(name=name, mac=field('mac_to_wake'),
                   options=parse_options(field('power_options'), name),
                   mode=field('power_mode') or MODE_OFF)


class PowerDriver(abc.ABC):
    """Suspends, wakes and reports the power state of one host at a time.

    Subclasses set ``NAME`` (their entry point name), ``OPTIONS`` (JSON
    schema of the per-host options, secrets marked ``"secret": true``) and
    ``MODES`` (the power modes they can suspend in), and implement
    ``_suspend``, ``_wake`` and ``_status``. The public methods check the
    host's settings first and turn any library error into a ``PowerError``
    whose message names host, driver and action, with secrets scrubbed.
    """

    NAME = None
    OPTIONS = {'type': 'object', 'properties': {}, 'additionalProperties': False}
    MODES = (MODE_OFF,)
    # Whether the BMC reports the watts the host draws (``power_watts``).
    MEASURES = False

    def __init__(self, conf):
        self.conf = conf

    @classmethod
    def check(cls, mode, options):
        """Raise PowerError unless ``mode`` and ``options`` suit this driver."""
        if mode not in cls.MODES:
            raise exception.PowerError('power driver %s cannot suspend in mode %r (supports: %s)'
                                       % (cls.NAME, mode, ', '.join(cls.MODES)))
        validate_options(options, cls.OPTIONS)

    @classmethod
    def schema_for(cls, options):
        """The schema of these ``options``: ``OPTIONS``, or more when an option
        names another driver whose options are nested (wol's suspend_via)."""
        return cls.OPTIONS

    @classmethod
    def redact(cls, options):
        return redact(options, cls.schema_for(options))

    @classmethod
    def secret_values(cls, options):
        return secret_values(options, cls.schema_for(options))

    @classmethod
    def can_suspend(cls, options):
        """False for drivers (or settings) that can only wake."""
        return True

    @classmethod
    def can_wake(cls, options):
        """False for drivers (or settings) that can only suspend."""
        return True

    def suspend(self, target):
        """Ask the host to suspend (mode s3) or power off (mode off)."""
        with self._errors(target, 'suspend'):
            self.check(target.mode, target.options)
            self._suspend(target)

    def wake(self, target):
        """Ask the host to power on or resume."""
        with self._errors(target, 'wake'):
            self.check(target.mode, target.options)
            self._wake(target)

    def status(self, target):
        """'on', 'off', 'suspended', or 'unknown' when the driver cannot tell."""
        with self._errors(target, 'status'):
            self.check(target.mode, target.options)
            state = self._status(target)
        if state not in STATUSES:
            raise exception.PowerError('status of host %s via %s: driver returned %r'
                                       % (target.name, self.NAME, state))
        return state

    def power_watts(self, target):
        """Watts the host draws now as its BMC measures them; None if it does not say."""
        with self._errors(target, 'power reading'):
            self.check(target.mode, target.options)
            watts = self._power_watts(target)
        if watts is None:
            return None
        if isinstance(watts, bool) or not isinstance(watts, (int, float)) or watts < 0:
            raise exception.PowerError('power reading of host %s via %s: BMC reported %r watts'
                                       % (target.name, self.NAME, watts))
        return float(watts)

    @contextlib.contextmanager
    def _errors(self, target, action):
        try:
            yield
        except Exception as exc:
            secrets = self.secret_values(target.options)
            detail = str(exc) or type(exc).__name__
            raise exception.PowerError(scrub('%s of host %s via %s failed: %s'
                                             % (action, target.name, self.NAME, detail),
                                             secrets)) from None

    def option(self, target, name, default=None):
        """The host's option ``name``, else ``default``."""
        value = target.options.get(name)
        return default if value is None else value

    @abc.abstractmethod
    def _suspend(self, target):
        """Issue the suspend / power-off command."""

    @abc.abstractmethod
    def _wake(self, target):
        """Issue the power-on / resume command."""

    @abc.abstractmethod
    def _status(self, target):
        """Return one of STATUSES."""

    def _power_watts(self, target):
        """Watts drawn now; drivers with ``MEASURES = True`` read their BMC."""
        return None
