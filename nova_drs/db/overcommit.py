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

"""Overcommit records: the ratios each instance was deployed with
(``instance_overcommit``), the ratios ``overcommit sync`` last wrote into
placement (``overcommit_synced_ratios``) and each host's ratio history
(``host_ratio_history``)."""

import collections

import sqlalchemy as sa

from nova_drs.db import models
from nova_drs.db import retention


def record(database, instance_uuid, host, vcpus, memory_mb, cpu_ratio, ram_ratio,
           recorded_by):
    """Remember (or re-remember after a move) the ratios an instance landed with."""
    values = dict(host=host, vcpus=int(vcpus or 0), memory_mb=int(memory_mb or 0),
                  cpu_allocation_ratio=cpu_ratio, ram_allocation_ratio=ram_ratio,
                  recorded_by=recorded_by)
    with database.writer() as session:
        row = session.get(models.InstanceOvercommit, instance_uuid)
        if row is None:
            session.add(models.InstanceOvercommit(instance_uuid=instance_uuid, **values))
        else:
            for name, value in values.items():
                setattr(row, name, value)


def forget(database, instance_uuid):
    with database.writer() as session:
        session.execute(sa.delete(models.InstanceOvercommit).filter_by(
            instance_uuid=instance_uuid))


def get(database, instance_uuid):
    with database.reader() as session:
        row = session.get(models.InstanceOvercommit, instance_uuid)
        if row is None:
            return None
        return {'instance_uuid': row.instance_uuid, 'host': row.host,
                'vcpus': row.vcpus, 'memory_mb': row.memory_mb,
                'cpu_allocation_ratio': row.cpu_allocation_ratio,
                'ram_allocation_ratio': row.ram_allocation_ratio,
                'recorded_by': row.recorded_by}


def hosts_of_recorded(database):
    """{instance_uuid: host} of every recorded instance."""
    table = models.InstanceOvercommit.__table__
    with database.reader() as session:
        return dict(session.execute(sa.select(table.c.instance_uuid, table.c.host)).all())


def usage_by_host(database):
    """Recorded flavor amounts per host and deployed-with ratio, in one query.

    Returns ``{host: {'vcpus': {ratio: sum}, 'memory_mb': {ratio: sum}}}``.
    """
    table = models.InstanceOvercommit.__table__
    query = (sa.select(table.c.host, table.c.cpu_allocation_ratio,
                       table.c.ram_allocation_ratio,
                       sa.func.sum(table.c.vcpus), sa.func.sum(table.c.memory_mb))
             .group_by(table.c.host, table.c.cpu_allocation_ratio,
                       table.c.ram_allocation_ratio))
    usage = collections.defaultdict(lambda: {'vcpus': collections.Counter(),
                                             'memory_mb': collections.Counter()})
    with database.reader() as session:
        for host, cpu_ratio, ram_ratio, vcpus, memory_mb in session.execute(query):
            # MySQL's SUM() is a DECIMAL: int, or it cannot meet the float ratios.
            usage[host]['vcpus'][cpu_ratio] += int(vcpus or 0)
            usage[host]['memory_mb'][ram_ratio] += int(memory_mb or 0)
    return dict(usage)


def synced_ratios(database):
    """{(host, resource_class): ratio} last written into placement by a sync."""
    table = models.OvercommitSyncedRatio.__table__
    with database.reader() as session:
        return {(host, rc): ratio for host, rc, ratio in session.execute(
            sa.select(table.c.host, table.c.resource_class, table.c.allocation_ratio))}


def remember_synced(database, host, resource_class, ratio):
    with database.writer() as session:
        row = session.get(models.OvercommitSyncedRatio, (host, resource_class))
        if row is None:
            session.add(models.OvercommitSyncedRatio(
                host=host, resource_class=resource_class, allocation_ratio=ratio))
        else:
            row.allocation_ratio = ratio


def forget_synced(database, host, resource_class):
    """The sync gave the host its default back: the ratio is nova-compute's again."""
    table = models.OvercommitSyncedRatio.__table__
    with database.writer() as session:
        session.execute(sa.delete(table).where(table.c.host == host,
                                               table.c.resource_class == resource_class))


def note_ratios(database, host, cpu_ratio, ram_ratio, since):
    """Add a history row when the host's ratios differ from its latest one."""
    table = models.HostRatioHistory.__table__
    with database.writer() as session:
        latest = session.execute(
            sa.select(table.c.cpu_allocation_ratio, table.c.ram_allocation_ratio)
            .where(table.c.host == host).order_by(table.c.since.desc(), table.c.id.desc())
            .limit(1)).first()
        if latest is not None and tuple(latest) == (cpu_ratio, ram_ratio):
            return False
        session.add(models.HostRatioHistory(host=host, cpu_allocation_ratio=cpu_ratio,
                                            ram_allocation_ratio=ram_ratio, since=since))
        return True


def ratios_at(database, host, when):
    """(cpu, ram) ratios of the host at ``when``, or None before its history."""
    table = models.HostRatioHistory.__table__
    with database.reader() as session:
        row = session.execute(
            sa.select(table.c.cpu_allocation_ratio, table.c.ram_allocation_ratio)
            .where(table.c.host == host, table.c.since <= when)
            .order_by(table.c.since.desc(), table.c.id.desc()).limit(1)).first()
    return None if row is None else tuple(row)


RATIO_HISTORY = models.HostRatioHistory.__table__


#: ``purge`` and ``purgeable`` of history_purge: rows before a cut-off go but each
#: host's newest one, which says what its ratios were at the cut-off.
_RETENTION = retention.NewestKept(RATIO_HISTORY, 'since')
purge = _RETENTION.purge
purgeable = _RETENTION.purgeable
