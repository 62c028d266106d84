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

"""The twin's power driver, plugged in where production plugs its drivers.

The daemon's ``power_drivers`` seam (``nova_drs.daemon.power.drivers_for``
in production) is a callable ``record -> (driver, PowerTarget)``; the twin
hands ``TwinPower`` in its place. Like a real BMC it only accepts commands:
the host goes down ``suspend_seconds`` after a suspend (its nova-compute
then stops heart-beating) and comes back ``wake_seconds`` after a wake,
unless the fault plan says it does not wake at all. A BMC that does not
answer (fault ``bmc_unresponsive``) costs the caller ``faults.BMC_TIMEOUT``
seconds of virtual time and raises, as a driver whose tool timed out does
(``PowerDriver`` turns it into the ``PowerError`` the daemon handles).
"""

import datetime

from oslo_utils import timeutils

from nova_drs.db import hosts as drs_hosts
from nova_drs.power import base
from nova_drs.sim.twin import faults as twin_faults


class TwinPower(base.PowerDriver):
    NAME = 'twin'
    MODES = (base.MODE_OFF, base.MODE_S3)

    def __init__(self, cloud, rng, suspend_seconds=(20.0, 60.0), wake_seconds=(60.0, 180.0)):
        super().__init__(None)
        self.cloud = cloud
        self.rng = rng
        self.suspend_seconds = suspend_seconds
        self.wake_seconds = wake_seconds
        self.shutdowns = 0
        self.off_since = {}          # host -> when it went down
        self.woken_at = {}           # host -> when it last came back up
        self.sleeps = []             # (host, seconds asleep) of every sleep that ended
        self.pending = set()         # hosts with a power command under way
        self.suspend_commands = []   # (host, time)

    def start_asleep(self, database, names, occupied, now):
        """Hosts of ``names`` not in ``occupied`` begin the run suspended by
        DRS: recorded so, nova-compute disabled and down, powered off."""
        drs_hosts.ensure_many(database, names)
        for name in names:
            if name in occupied:
                continue
            for before, after in ((drs_hosts.ACTIVE, drs_hosts.SUSPENDING),
                                  (drs_hosts.SUSPENDING, drs_hosts.SUSPENDED)):
                drs_hosts.transition(database, name, before, after, 'twin: empty at the start')
            drs_hosts.set_fields(database, name, disabled_by_drs=True)
            host = self.cloud.hosts[name]
            host.powered = host.up = host.enabled = False
            host.disabled_reason = 'nova-drs: suspending host'
            self.off_since[name] = now

    def __call__(self, record):
        return self, base.PowerTarget(name=record['host'])

    def _later(self, seconds, callback):
        low, high = seconds
        delay = datetime.timedelta(seconds=self.rng.uniform(low, high))
        self.cloud.at(timeutils.utcnow() + delay, callback)

    def _bmc(self, target):
        """Every command reaches the BMC first; an unresponsive one times out."""
        if self.cloud.faults.bmc_hangs(target.name):
            timeutils.advance_time_seconds(twin_faults.BMC_TIMEOUT)
            raise TimeoutError('twin fault: BMC of %s did not answer in %d s'
                               % (target.name, twin_faults.BMC_TIMEOUT))

    def _suspend(self, target):
        self._bmc(target)
        host = self.cloud.hosts[target.name]
        if target.name in self.pending or not host.powered:
            return
        self.pending.add(target.name)
        self.suspend_commands.append((target.name, timeutils.utcnow()))

        def down():
            self.pending.discard(target.name)
            host.powered = host.up = False
            self.shutdowns += 1
            self.off_since[target.name] = timeutils.utcnow()
        self._later(self.suspend_seconds, down)

    def _wake(self, target):
        self._bmc(target)
        host = self.cloud.hosts[target.name]
        if target.name in self.pending or host.up:
            return
        self.pending.add(target.name)
        wakes = not self.cloud.faults.wake_fails(target.name)

        def up():
            if not wakes:
                return              # BMC took the command; the OS never came up
            self.pending.discard(target.name)
            now = timeutils.utcnow()
            host.powered = host.up = True
            host.heartbeat = now
            self.woken_at[target.name] = now
            went_down = self.off_since.pop(target.name, None)
            if went_down is not None:
                self.sleeps.append((target.name, (now - went_down).total_seconds()))
        self._later(self.wake_seconds, up)

    def _status(self, target):
        self._bmc(target)
        return base.ON if self.cloud.hosts[target.name].powered else base.OFF
