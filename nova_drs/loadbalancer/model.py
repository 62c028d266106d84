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

"""Immutable snapshot and plan model of the decision core.

The core sees the cluster only through these frozen objects so that a
decision is a pure function of its input: the daemon builds a snapshot from
nova, the simulator builds one from traces, and both get the same plan.
"""

import dataclasses
import enum

ACTIVE = 'active'
SUSPENDING = 'suspending'
SUSPENDED = 'suspended'
WAKING = 'waking'
ERROR = 'error'
#: Maintenance: powered on but never a source, a destination or active capacity
#: (the core uses only ACTIVE hosts and wakes only SUSPENDED ones).
ENTERING_MAINTENANCE = 'entering_maintenance'
MAINTENANCE = 'maintenance'
POWER_STATES = frozenset((ACTIVE, SUSPENDING, SUSPENDED, WAKING, ERROR,
                          ENTERING_MAINTENANCE, MAINTENANCE))

AFFINITY = 'affinity'
ANTI_AFFINITY = 'anti-affinity'


class InvalidSnapshot(ValueError):
    """The snapshot contradicts itself; the core refuses to plan on it."""

    def __init__(self, obj, problem):
        super().__init__('%s: %s' % (obj, problem))
        self.obj = obj
        self.problem = problem


@dataclasses.dataclass(frozen=True, slots=True)
class Host:
    """A compute node.

    ``mips`` is the whole CPU capacity (any unit, e.g. MIPS or MHz) and
    ``pe_mips`` the capacity of one core: an instance demanding more than one
    core can deliver cannot run there.  ``power_curve`` gives watts at 0, 10,
    ..., 100 % CPU (SPECpower style); ``None`` means an unknown server, for
    which a generic linear curve is used.  ``cpu_history`` (fractions,
    oldest first) is used only when none of its instances carries history.
    ``suspendable`` False keeps a host on (no usable power driver, woken
    moments ago, wake failed before) while it may still take instances.
    """

    name: str
    vcpus: int
    ram_mb: int
    mips: float
    pe_mips: float = 0.0
    cluster: str = 'default'
    cpu_allocation_ratio: float = 1.0
    ram_allocation_ratio: float = 1.0
    power_state: str = ACTIVE
    excluded: bool = False
    cpu_history: tuple = ()
    power_curve: tuple = None
    suspendable: bool = True


@dataclasses.dataclass(frozen=True, slots=True)
class Instance:
    """A server.  ``cpu_history`` holds CPU demand as a fraction of ``mips``,
    oldest first, the last value being the current demand.  ``movable``
    False (the server opted out of DRS) keeps it where it is: never
    migrated, and its host is never suspended."""

    uuid: str
    host: str
    vcpus: int
    ram_mb: int
    mips: float
    cpu_history: tuple = ()
    state: str = 'active'
    server_group: str = None
    group_policy: str = None
    last_migrated_at: float = None
    #: The host it left at ``last_migrated_at``: not its destination while cooling.
    left_host: str = None
    movable: bool = True


@dataclasses.dataclass(frozen=True, slots=True)
class InFlightMigration:
    """A migration already running: it holds resources on both ends."""

    instance: str
    source: str
    destination: str


@dataclasses.dataclass(frozen=True, slots=True)
class Snapshot:
    hosts: tuple
    instances: tuple
    migrations: tuple = ()
    now: float = 0.0


class Reason(str, enum.Enum):
    OVERLOAD = 'overload'
    UNDERLOAD = 'underload'
    CAPACITY = 'capacity'


@dataclasses.dataclass(frozen=True, slots=True)
class Migrate:
    instance: str
    source: str
    destination: str
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class Suspend:
    host: str
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class Wake:
    host: str
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """Ordered actions: wakes first, then migrations, then suspends;
    ``findings`` say why (findings.Finding), and do not count in equality."""

    actions: tuple = ()
    findings: tuple = dataclasses.field(default=(), compare=False)

    @property
    def migrations(self):
        return tuple(a for a in self.actions if isinstance(a, Migrate))

    @property
    def suspends(self):
        return tuple(a for a in self.actions if isinstance(a, Suspend))

    @property
    def wakes(self):
        return tuple(a for a in self.actions if isinstance(a, Wake))


@dataclasses.dataclass(frozen=True, slots=True)
class SafetyLimits:
    """Floor of active hosts per cluster: ``min_active_hosts`` plus
    ``hosts_in_reserve`` spare hosts kept on for sudden load."""

    min_active_hosts: int = 1
    hosts_in_reserve: int = 0

    @property
    def floor(self):
        return self.min_active_hosts + self.hosts_in_reserve


DEFAULT_LIMITS = SafetyLimits()


def _check_fraction_history(obj, history):
    if not history:
        return
    try:
        total, lowest = sum(history), min(history)
    except TypeError:
        total = lowest = float('nan')
    if total != total or lowest < 0 or isinstance(history, str):
        raise InvalidSnapshot(obj, 'cpu_history must hold non-negative numbers, got %r'
                              % (tuple(history)[:5],))


def _instance_problem(inst, seen, hosts):
    obj = 'instance %s' % inst.uuid
    if inst.uuid in seen:
        raise InvalidSnapshot(obj, 'duplicate instance uuid')
    if inst.host not in hosts:
        raise InvalidSnapshot(obj, 'on unknown host %r' % (inst.host,))
    for field in ('vcpus', 'ram_mb', 'mips'):
        if getattr(inst, field) < 0:
            raise InvalidSnapshot(obj, 'negative %s' % field)
    raise InvalidSnapshot(obj, 'unknown group policy %r' % (inst.group_policy,))


def validate(snapshot):
    """Raise InvalidSnapshot naming the first inconsistent object."""
    hosts = {}
    for host in snapshot.hosts:
        obj = 'host %s' % host.name
        if host.name in hosts:
            raise InvalidSnapshot(obj, 'duplicate host name')
        for field in ('vcpus', 'ram_mb', 'mips', 'pe_mips'):
            if getattr(host, field) < 0:
                raise InvalidSnapshot(obj, 'negative %s' % field)
        if host.mips <= 0:
            raise InvalidSnapshot(obj, 'mips must be positive')
        if host.cpu_allocation_ratio <= 0 or host.ram_allocation_ratio <= 0:
            raise InvalidSnapshot(obj, 'allocation ratios must be positive')
        if host.power_state not in POWER_STATES:
            raise InvalidSnapshot(obj, 'unknown power state %r' % host.power_state)
        if host.power_curve is not None and len(host.power_curve) != 11:
            raise InvalidSnapshot(obj, 'power_curve needs 11 points (0..100 %)')
        _check_fraction_history(obj, host.cpu_history)
        hosts[host.name] = host
    seen = set()
    policies = (None, AFFINITY, ANTI_AFFINITY)
    for inst in snapshot.instances:
        if (inst.uuid in seen or inst.host not in hosts or inst.vcpus < 0 or inst.ram_mb < 0
                or inst.mips < 0 or inst.group_policy not in policies):
            _instance_problem(inst, seen, hosts)
        seen.add(inst.uuid)
        history = inst.cpu_history
        if history:
            try:
                suspicious = min(history) < 0 or sum(history) != sum(history)
            except TypeError:
                suspicious = True
            if suspicious:
                _check_fraction_history('instance %s' % inst.uuid, history)
    moving = set()
    for mig in snapshot.migrations:
        obj = 'migration of %s' % mig.instance
        if mig.instance not in seen:
            raise InvalidSnapshot(obj, 'unknown instance')
        if mig.instance in moving:
            raise InvalidSnapshot(obj, 'instance migrating twice')
        moving.add(mig.instance)
        for end in (mig.source, mig.destination):
            if end not in hosts:
                raise InvalidSnapshot(obj, 'unknown host %r' % (end,))
