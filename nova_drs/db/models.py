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

"""Tables of the DRS database (never nova's).

The seed (nova-loadbalancer spec) put ``suspend_state``/``mac_to_wake`` on
nova's ``compute_nodes``; we cannot touch nova's schema, so per-host DRS state
lives in ``drs_hosts`` keyed by the nova-compute service host name.
"""


from oslo_utils import timeutils
import sqlalchemy as sa
from sqlalchemy import orm

from nova_drs.db import types

HOST_STATES = ('active', 'suspending', 'suspended', 'waking', 'error',
               'entering_maintenance', 'maintenance')


class Base(orm.DeclarativeBase):
    pass


class TimestampMixin:
    created_at = sa.Column(sa.DateTime, default=timeutils.utcnow, nullable=False)
    updated_at = sa.Column(sa.DateTime, onupdate=timeutils.utcnow)


class SoftDeleteMixin:
    """The seed's deleted/deleted_at columns, kept for operators' tooling."""

    deleted_at = sa.Column(sa.DateTime)
    deleted = sa.Column(sa.Integer, default=0, nullable=False)


class DrsHost(TimestampMixin, Base):
    """DRS power state and wake settings of one compute host."""

    __tablename__ = 'drs_hosts'

    id = sa.Column(sa.Integer, primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    hypervisor_hostname = sa.Column(sa.String(255))
    suspend_state = sa.Column(sa.String(32), nullable=False, default='active')
    state_reason = sa.Column(sa.Text)
    state_changed_at = sa.Column(sa.DateTime)
    # Incremented on every transition: compare-and-swap guard against races
    # between the API and one or more daemons.
    state_version = sa.Column(sa.Integer, nullable=False, default=0)
    mac_to_wake = sa.Column(sa.String(17))
    power_driver = sa.Column(sa.String(64))
    power_mode = sa.Column(sa.String(16))
    # JSON; may contain secrets, never returned by the API nor logged.
    power_options = sa.Column(sa.Text)
    wake_failed = sa.Column(sa.Boolean, nullable=False, default=False)
    # True only when nova-drs disabled the nova-compute service itself, so
    # it re-enables exactly what it disabled and never an admin's choice.
    disabled_by_drs = sa.Column(sa.Boolean, nullable=False, default=False)
    # Set when a suspend/wake command was issued; the state only moves on
    # once the host is confirmed down/up (never right after the command).
    power_requested_at = sa.Column(sa.DateTime)

    __table_args__ = (
        sa.UniqueConstraint('host', name='uniq_drs_hosts0host'),
        sa.CheckConstraint(
            "suspend_state IN ('%s')" % "','".join(HOST_STATES),
            name='ck_drs_hosts_suspend_state'),
    )


class ComputeNodeStats(TimestampMixin, SoftDeleteMixin, Base):
    """One utilisation sample of a hypervisor host."""

    __tablename__ = 'compute_node_stats'

    id = sa.Column(types.BigId, primary_key=True, autoincrement=True)
    host = sa.Column(sa.String(255), nullable=False)
    hypervisor_hostname = sa.Column(sa.String(255))
    compute_id = sa.Column(sa.Integer)
    memory_total = sa.Column(sa.Integer)
    memory_used = sa.Column(sa.Integer)
    cpu_used_percent = sa.Column(sa.Float)
    vcpus = sa.Column(sa.Integer)
    sampled_at = sa.Column(sa.DateTime, nullable=False)

    __table_args__ = (
        sa.UniqueConstraint('host', 'sampled_at',
                            name='uniq_compute_node_stats0host0sampled_at'),
        sa.Index('compute_node_stats_sampled_at_idx', 'sampled_at'),
    )


class InstanceStats(TimestampMixin, SoftDeleteMixin, Base):
    """One utilisation sample of an instance (CPU time, memory, disk I/O)."""

    __tablename__ = 'instance_stats'

    id = sa.Column(types.BigId, primary_key=True, autoincrement=True)
    instance_uuid = sa.Column(sa.String(36), nullable=False)
    host = sa.Column(sa.String(255))
    libvirt_id = sa.Column(sa.Integer)
    vcpus = sa.Column(sa.Integer)
    cpu_time = sa.Column(sa.BigInteger)
    prev_cpu_time = sa.Column(sa.BigInteger)
    cpu_used_percent = sa.Column(sa.Float)
    mem = sa.Column(sa.Integer)
    block_dev_iops = sa.Column(sa.BigInteger)
    prev_block_dev_iops = sa.Column(sa.BigInteger)
    prev_updated_at = sa.Column(sa.DateTime)
    sampled_at = sa.Column(sa.DateTime, nullable=False)

    __table_args__ = (
        sa.UniqueConstraint('instance_uuid', 'sampled_at',
                            name='uniq_instance_stats0uuid0sampled_at'),
        sa.Index('instance_stats_host_sampled_at_idx', 'host', 'sampled_at'),
        sa.Index('instance_stats_sampled_at_idx', 'sampled_at'),
    )


class LbMigration(TimestampMixin, Base):
    """A migration the daemon asked nova for: cooldowns, retries, no duplicates."""

    __tablename__ = 'lb_migrations'

    id = sa.Column(sa.Integer, primary_key=True)
    instance_uuid = sa.Column(sa.String(36), nullable=False)
    source = sa.Column(sa.String(255), nullable=False)
    destination = sa.Column(sa.String(255))
    kind = sa.Column(sa.String(8), nullable=False)  # live | cold
    reason = sa.Column(sa.Text)
    # requested -> done | failed | aborted
    status = sa.Column(sa.String(16), nullable=False)
    finished_at = sa.Column(sa.DateTime)

    __table_args__ = (
        sa.Index('lb_migrations_instance_idx', 'instance_uuid', 'created_at'),
        sa.Index('lb_migrations_status_idx', 'status'),
        sa.Index('lb_migrations_created_at_idx', 'created_at'),
    )


class LbRule(TimestampMixin, Base):
    """Allow/deny rule: which hosts the loadbalancer may touch."""

    __tablename__ = 'lb_rules'

    id = sa.Column(sa.Integer, primary_key=True)
    type = sa.Column(sa.String(32), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)
    allow = sa.Column(sa.Boolean, nullable=False)


REQUEST_STATUSES = ('pending', 'running', 'done', 'failed')
#: superseded: a pending plan a later cycle replaced (migration 0014).
PLAN_STATUSES = ('pending', 'approved', 'rejected', 'superseded', 'executing', 'done',
                 'failed')
#: pending: not sent yet; started: claimed, nova asked (or being asked); done:
#: nova accepted it (or the host moved to suspending/waking); failed: nova
#: refused it; skipped: no longer applicable when its turn came.
PLAN_ACTION_STATUSES = ('pending', 'started', 'done', 'failed', 'skipped')


class LbRequest(Base):
    """An administrator's request (e.g. wake test) the daemon carries out."""

    __tablename__ = 'lb_requests'

    id = sa.Column(sa.Integer, primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    action = sa.Column(sa.String(32), nullable=False)
    status = sa.Column(sa.String(16), nullable=False, default='pending')
    requested_by = sa.Column(sa.String(255))
    created_at = sa.Column(sa.DateTime, default=timeutils.utcnow, nullable=False)
    finished_at = sa.Column(sa.DateTime)
    # Free text (or JSON) written by the daemon when it finishes.
    result = sa.Column(sa.Text)

    __table_args__ = (
        sa.CheckConstraint(
            "status IN ('%s')" % "','".join(REQUEST_STATUSES),
            name='ck_lb_requests_status'),
        sa.Index('lb_requests_status_idx', 'status'),
    )


class LbPlan(Base):
    """A plan of the loadbalancer: actions (JSON list) and the reasons for them."""

    __tablename__ = 'lb_plans'

    id = sa.Column(sa.Integer, primary_key=True)
    cluster = sa.Column(sa.String(255))
    created_at = sa.Column(sa.DateTime, default=timeutils.utcnow, nullable=False)
    updated_at = sa.Column(sa.DateTime, onupdate=timeutils.utcnow)
    mode = sa.Column(sa.String(16), nullable=False)
    status = sa.Column(sa.String(16), nullable=False, default='pending')
    # JSON list of actions, e.g. [{"type": "migrate", "instance": ..., "to": ...}].
    actions = sa.Column(types.LongText)
    # JSON list of human-readable reasons.
    reasons = sa.Column(types.LongText)
    decided_by = sa.Column(sa.String(255))

    __table_args__ = (
        sa.CheckConstraint(
            "status IN ('%s')" % "','".join(PLAN_STATUSES),
            name='ck_lb_plans_status'),
        sa.Index('lb_plans_created_at_idx', 'created_at'),
        sa.Index('lb_plans_status_idx', 'status', 'cluster'),
    )


class LbPlanAction(Base):
    """Progress of one action of a plan: the action itself is entry ``position``
    of its plan's ``actions`` list; the row says how far it got."""

    __tablename__ = 'lb_plan_actions'

    id = sa.Column(types.BigId, primary_key=True, autoincrement=True)
    plan_id = sa.Column(sa.Integer, sa.ForeignKey('lb_plans.id', ondelete='CASCADE'),
                        nullable=False)
    position = sa.Column(sa.Integer, nullable=False)
    status = sa.Column(sa.String(16), nullable=False, default='pending')
    # Why it failed (nova's answer) or was skipped.
    detail = sa.Column(sa.Text)
    updated_at = sa.Column(sa.DateTime)

    __table_args__ = (
        sa.UniqueConstraint('plan_id', 'position', name='uniq_lb_plan_actions0plan0position'),
        sa.CheckConstraint(
            "status IN ('%s')" % "','".join(PLAN_ACTION_STATUSES),
            name='ck_lb_plan_actions_status'),
        sa.Index('lb_plan_actions_plan_status_idx', 'plan_id', 'status'),
    )


class LbDecision(Base):
    """Why one host or server got its verdict in one cycle (``drs explain``)."""

    __tablename__ = 'lb_decisions'

    id = sa.Column(types.BigId, primary_key=True, autoincrement=True)
    cycle_at = sa.Column(sa.DateTime, nullable=False)
    subject_type = sa.Column(sa.String(16), nullable=False)
    subject = sa.Column(sa.String(255), nullable=False)
    verdict = sa.Column(sa.String(32), nullable=False)
    refusal = sa.Column(sa.String(64))
    reason = sa.Column(sa.Text, nullable=False)
    # JSON list of [candidate host, refusal] a moved server could not go to.
    refused = sa.Column(sa.Text)

    __table_args__ = (
        sa.Index('lb_decisions_subject_idx', 'subject_type', 'subject', 'cycle_at'),
        sa.Index('lb_decisions_cycle_at_idx', 'cycle_at'),
    )


class DrsPowerReading(Base):
    """Watts a host's BMC reported (Redfish PowerConsumedWatts, IPMI DCMI)."""

    __tablename__ = 'drs_power_readings'

    id = sa.Column(types.BigId, primary_key=True, autoincrement=True)
    host = sa.Column(sa.String(255), nullable=False)
    read_at = sa.Column(sa.DateTime, nullable=False)
    watts = sa.Column(sa.Float, nullable=False)

    __table_args__ = (
        sa.Index('drs_power_readings_host_idx', 'host', 'read_at'),
        sa.Index('drs_power_readings_read_at_idx', 'read_at'),
    )


class InstanceOvercommit(TimestampMixin, Base):
    """The allocation ratios an instance was deployed with, and its size.

    Written when the instance lands on a host (create, live/cold migration,
    resize, rebuild, unshelve) and on reconciliation; read by the overcommit
    filters and the capacity report (CloudStack's ``flavor / x * y`` rule).
    """

    __tablename__ = 'instance_overcommit'

    instance_uuid = sa.Column(sa.String(36), primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    cpu_allocation_ratio = sa.Column(sa.Float, nullable=False)
    ram_allocation_ratio = sa.Column(sa.Float, nullable=False)
    # Which event recorded it: a notification event type or 'sync'.
    recorded_by = sa.Column(sa.String(64), nullable=False)

    __table_args__ = (
        sa.Index('instance_overcommit_host_idx', 'host'),
    )


class HostRatioHistory(Base):
    """The effective ratios of a host from ``since`` on, as nova-drs saw them.

    An instance nova-drs never saw land is recorded at the ratios in force
    at its launch, not at those of the day it is reconciled.
    """

    __tablename__ = 'host_ratio_history'

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    host = sa.Column(sa.String(255), nullable=False)
    cpu_allocation_ratio = sa.Column(sa.Float, nullable=False)
    ram_allocation_ratio = sa.Column(sa.Float, nullable=False)
    since = sa.Column(sa.DateTime, nullable=False)

    __table_args__ = (
        sa.Index('host_ratio_history_host_since_idx', 'host', 'since'),
    )


class OvercommitSyncedRatio(TimestampMixin, Base):
    """The allocation ratio ``overcommit sync`` last wrote into placement.

    When placement later shows another value, nova-compute overwrote it
    (``cpu_allocation_ratio``/``ram_allocation_ratio`` set in its nova.conf).
    """

    __tablename__ = 'overcommit_synced_ratios'

    host = sa.Column(sa.String(255), primary_key=True)
    resource_class = sa.Column(sa.String(32), primary_key=True)
    allocation_ratio = sa.Column(sa.Float, nullable=False)


class DrsHostStateChange(Base):
    """One host state transition: the history suspends, wakes and energy come from."""

    __tablename__ = 'drs_host_state_changes'

    id = sa.Column(types.BigId, primary_key=True, autoincrement=True)
    host = sa.Column(sa.String(255), nullable=False)
    state = sa.Column(sa.String(32), nullable=False)
    reason = sa.Column(sa.Text)
    changed_at = sa.Column(sa.DateTime, nullable=False)

    __table_args__ = (
        sa.Index('drs_host_state_changes_host_idx', 'host', 'changed_at'),
        sa.Index('drs_host_state_changes_changed_at_idx', 'changed_at'),
    )


class DrsCycleInventory(Base):
    """What one daemon cycle planned from, except the CPU histories (those are the
    statistics tables): zlib-compressed JSON, read by ``nova-drs-sim --from-stats``."""

    __tablename__ = 'drs_cycle_inventory'

    id = sa.Column(types.BigId, primary_key=True, autoincrement=True)
    taken_at = sa.Column(sa.DateTime, nullable=False)
    body = sa.Column(types.LongBlob, nullable=False)

    __table_args__ = (
        sa.Index('drs_cycle_inventory_taken_at_idx', 'taken_at'),
    )
