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

"""The errors nova-drs raises, one place to find them (as nova's exception.py).

Raise and catch them as ``exception.<Name>`` (``from nova_drs import
exception``). Each docstring says when the error is raised and what its
caller does with it. Every message is one line fit for a log or a terminal
and never holds a secret. This module imports nothing of nova-drs: every
layer may use it.

A few errors live elsewhere on purpose:

* ``loadbalancer.model.InvalidSnapshot``: the decision core imports nothing
  but the standard library and itself (``tests/unit/loadbalancer/test_boundaries.py``).
* ``daemon.evacuation.Overtaken``: the lifecycle's own control flow (an admin
  won a compare-and-swap race); it never leaves the lifecycle's steps.
* ``sim.twin.cloud.NovaError`` and ``Hang``: the answers the simulator's fake
  nova gives, turned into HTTP statuses and timeouts before the daemon sees them.
"""


# Options and the commands' startup.

class ConfigError(Exception):
    """A nova-drs option has a value that cannot be used; the message names it.

    Raised at startup; the commands print it as one line and exit non-zero."""


class ExporterConfigError(OSError):
    """A [drs_metrics] setting the endpoint cannot serve with (an OSError, as a
    port in use or an unreadable certificate: the commands report it in one line)."""


class SetupError(Exception):
    """``nova-drs-sim --from-stats`` cannot read its configuration, database or
    history; the command prints the message and exits 1."""


class PluginLoadError(Exception):
    """A configured compute-resource or scheduler-consumer plugin does not exist or
    cannot be created; the compute monitor or the scheduler logs it and runs with
    none of those plugins."""


class UnsafePattern(ValueError):
    """An allow/deny rule pattern does not compile or could take unbounded time to
    match; the API answers 400, the daemon disables the stored rule."""


# The DRS database.

class DatabaseError(Exception):
    """The DRS database cannot be used; the message says why, without secrets.

    The commands exit with it as one line, the API answers 503."""


class IllegalTransition(ValueError):
    """A host's DRS state was asked to move along a transition its state machine
    does not have; a programming error, left to propagate."""


# Host power.

class PowerError(Exception):
    """A power action or setting failed; the message never holds a secret.

    Power drivers' public methods raise it, naming host, driver and action; the
    daemon logs it and fails that power action, the API answers 400."""


class PathError(PowerError):
    """A power option names a file outside ``[drs_power] files_dir``; handled as
    any PowerError."""


class SealError(PowerError):
    """A key file or a sealed value cannot be used; the message is one line, no
    secret. The daemon refuses to start on it; the API answers 400 (500 when its
    own public key file is unusable)."""


# nova and placement, as the daemon, the scale executor and the commands reach them.

class NovaUnavailable(Exception):
    """nova or placement could not answer; the cycle must not act on half a view.

    ``status`` is the 5xx nova answered, None when no answer came at all
    (refused, reset, timed out): a 5xx on one host's or one server's request
    is that host's fault (the cycle goes on without it), no answer is nova's.
    """

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class IncompleteListing(NovaUnavailable):
    """A paged listing could not be followed to its last page; the cycle is skipped."""


class NovaRequestFailed(Exception):
    """nova refused one request (4xx); the message carries nova's explanation.

    The caller gives up that one action (``status`` says why) and goes on."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class PlacementError(Exception):
    """Placement inventories could not be read or written during the overcommit
    sync; the daemon skips the sync this cycle, ``nova-drs-manage`` exits with it."""


# The daemon's coordination (tooz).

class CoordinationError(Exception):
    """The daemon cannot coordinate (backend unreachable or past its deadline, lock
    taken); nova-loadbalancer refuses to start with it in one line."""


class CoordinationConfigError(CoordinationError, ConfigError):
    """A [drs_coordination] option cannot be used; the message names it (startup
    reports it as any ConfigError)."""


class NotLeader(CoordinationError):
    """A fence token was asked for while this daemon is not the leader; the daemon
    then claims no plan action."""


# The REST API and its client.

class ValidationError(ValueError):
    """A request body does not match its schema; the message says where and why,
    the API answers 400 with it."""


class DrsError(Exception):
    """A call of the nova-drs API failed; the message is nova's explanation and the
    HTTP status. ``DrsClient``'s default error; the CLIs pass their own."""


# Statistics samples.

class InvalidSample(ValueError):
    """A statistics sample that cannot be stored; the message says which field.

    ``reason`` (``stats.ingest`` MALFORMED, OUT_OF_RANGE, WRONG_SENDER) labels
    the collector's refusal metric; the collector logs, counts and drops it."""

    def __init__(self, message, reason):
        super().__init__(message)
        self.reason = reason


# Server scaling (the scale API checks).

class ScaleNotFound(Exception):
    """The server, flavor or scale request does not exist; the API answers 404."""


class ScaleRefused(Exception):
    """The scale request conflicts with the server's or the cloud's state; the API
    answers 409."""


class ScalerError(ValueError):
    """``[drs_scale] scaler`` names no installed scaler or it cannot be loaded; a
    startup ConfigError."""


# The simulator's inputs.

class TraceError(ValueError):
    """Bad trace input, with the file (and line) at fault in the message;
    ``nova-drs-sim`` prints it and exits 2."""


class DatasetError(ValueError):
    """A file that is not a readable what-if dataset; the message is one line,
    ``nova-drs-sim`` prints it and exits 2."""


class SimulationError(ValueError):
    """The scenario cannot run (e.g. a VM fits on no host); ``nova-drs-sim`` prints
    it and exits 2."""


class NoData(ValueError):
    """Nothing to replay in the chosen period; ``nova-drs-sim --from-stats`` exits
    with it (a SetupError)."""
