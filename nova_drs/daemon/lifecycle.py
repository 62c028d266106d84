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

"""Host lifecycle: suspending -> suspended, waking -> active, and
entering_maintenance -> maintenance.

Driven once per cycle from the state persisted in the DRS database, so a
daemon that crashes at any point resumes (or rolls back) on restart just by
running the next cycle. Rules that keep VMs safe:

* the nova-compute service is disabled before anything moves (nova and
  placement then exclude the host natively; SuspendStateFilter is the second
  lock), and ``disabled_by_drs`` is written *before* the disable call, so a
  crash never leaves a disabled host nobody re-enables;
* every server on the host counts, whatever its state; one that cannot move
  aborts the suspend (service re-enabled, host back to ``active``), and so
  does one opted out with ``drs:automation=disabled`` (never moved by DRS);
* emptiness is re-checked from nova and placement at the last moment;
* ``suspended``/``active`` are written only once the host is confirmed down/up,
  never right after the power command;
* every step that acts (service disable/enable, each evacuation start, the
  power command) first does a compare-and-swap on the (suspend_state,
  state_version) it read: an admin's cancel that won first stops the step
  before anything leaves, and once the power command is recorded the cancel
  is refused. A cancelled or abandoned evacuation migrates nothing more and
  its open ``lb_migrations`` rows are closed;
* maintenance empties a host exactly as a suspend does, then keeps it
  disabled and powered on. A host that cannot be emptied stays in
  ``entering_maintenance`` with the reason (as vSphere and oVirt do); a
  server whose move failed is tried again after a growing delay, and a
  suspended host of the cluster is woken to make room (evacuation.py),
  until the host empties or an admin ends the maintenance.
"""

import collections
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs import cluster_policy
from nova_drs.clients import nova_api
from nova_drs.daemon import budget as budget_mod
from nova_drs.daemon import evacuation
from nova_drs.db import hosts as drs_hosts

LOG = logging.getLogger(__name__)

DISABLED_REASON = 'nova-drs: %s'
#: States the daemon advances every cycle (plus active hosts it still disables).
ADVANCING = evacuation.EVACUATING | {drs_hosts.WAKING}


class HostLifecycle(evacuation.EvacuationSteps):
    """Advances hosts in ``suspending``, ``entering_maintenance`` and ``waking``
    one safe step per call (the evacuation steps come from evacuation.py)."""

    def __init__(self, nova, database, power_drivers, suspend_timeout,
                 wake_timeout, migration_timeout, crash_point=None, clock=timeutils.utcnow,
                 targets=None):
        self.nova = nova
        self.db = database
        self.power_drivers = power_drivers
        self.suspend_timeout = datetime.timedelta(seconds=suspend_timeout)
        self.wake_timeout = datetime.timedelta(seconds=wake_timeout)
        self.migration_timeout = datetime.timedelta(seconds=migration_timeout)
        self._crash_point = crash_point or (lambda name: None)
        self._now = clock
        #: the cycle's migration and wake limits (service.run_cycle sets it);
        #: unlimited, one cluster, for a lifecycle driven alone
        self.budget = budget_mod.Budget(
            collections.defaultdict(lambda: float('inf')),
            lambda host: cluster_policy.DEFAULT_CLUSTER, ())
        #: {host: [compute node id]} of the cycle's observe (Advance.run sets
        #: it, as it sets the budget): an emptied host's placement check asks
        #: about its own nodes, never lists every hypervisor again
        self.compute_nodes = {}
        #: where the plans that started suspends send their hosts' servers
        self.targets = targets if targets is not None else evacuation.Targets()
        #: (host, state_version) of a wake -> (heartbeat, up) nova showed when
        #: this daemon sent the wake command: what "reported since" compares with.
        self._seen_at_wake = {}

    # -- entry points -----------------------------------------------------
    def advance(self, record):
        """One step for one host record (dict from nova_drs.db.hosts)."""
        state = record['suspend_state']
        try:
            if state in evacuation.EVACUATING:
                self._advance_evacuating(record)
            elif state == drs_hosts.WAKING:
                self._advance_waking(record)
            elif state == drs_hosts.ACTIVE and record['disabled_by_drs']:
                self._reenable(record)
        except evacuation.Overtaken:
            self._after_overtaken(record)

    def _after_overtaken(self, record):
        host = record['host']
        current = drs_hosts.get(self.db, host)
        LOG.info('%s: went from %s to %s while a step ran; the step stopped there',
                 host, record['suspend_state'], current['suspend_state'])
        self.close_abandoned_evacuations()
        if current['suspend_state'] == drs_hosts.ACTIVE and current['disabled_by_drs']:
            try:
                self._reenable(current)
            except evacuation.Overtaken:
                pass  # moved again: the next cycle starts from what it is then

    def _check(self, record, **fields):
        """The compare-and-swap before a step acts; raises Overtaken when it lost."""
        if not drs_hosts.set_fields_at(self.db, record['host'], record['suspend_state'],
                                       record['state_version'], **fields):
            raise evacuation.Overtaken(record['host'])

    # -- suspending / entering maintenance --------------------------------
    def _advance_evacuating(self, record):
        host = record['host']
        suspend = record['suspend_state'] == drs_hosts.SUSPENDING
        phase = 'suspend' if suspend else 'maintenance'
        service = self.nova.compute_service(host)
        if service is None:
            self._give_up(record, 'nova knows no compute service on %s' % host)
            return
        if record['power_requested_at'] is not None:
            self._confirm_suspended(record, service)
            return
        if suspend:
            try:
                driver, target = self.power_drivers(record)
                if not (driver.can_suspend(target.options)
                        and driver.can_wake(target.options)):
                    raise ValueError('the %s driver cannot both suspend and wake this host'
                                     % getattr(driver, 'NAME', driver))
            except Exception as exc:
                # Never empty a host we could not power off, or not wake again.
                self._give_up(record, 'no usable power driver: %s' % exc)
                return
        if service['status'] == 'enabled':
            self._check(record, disabled_by_drs=True)
            self._crash_point('%s:flag-written' % phase)
            self.nova.disable_service(service['id'], DISABLED_REASON % (
                'suspending host' if suspend else 'host in maintenance'))
            self._crash_point('%s:service-disabled' % phase)
        self._confirm_finished_cold_migrations(host, phase)
        servers = self.nova.servers_on_host(host)
        self._settle_requests(host, servers)
        if servers:
            self._move_servers(record, service, servers)
            return
        if not self._empty_in_placement(host):
            LOG.info('%s: no servers listed but placement is not known empty; '
                     'waiting', host)
            return
        if suspend:
            self._power_off(record, service)
        else:
            self._enter_maintenance(record)

    def _enter_maintenance(self, record):
        """Empty: maintenance, still disabled and powered on, until an admin ends it."""
        if drs_hosts.transition_at(
                self.db, record['host'], drs_hosts.ENTERING_MAINTENANCE,
                record['state_version'], drs_hosts.MAINTENANCE,
                'in maintenance: emptied, nova-compute kept disabled') is None:
            raise evacuation.Overtaken(record['host'])
        LOG.info('%s: empty, in maintenance', record['host'])

    def _power_off(self, record, service):
        host = record['host']
        # From here on an unsuspend is refused: the host ends suspended or in error.
        self._check(record, power_requested_at=self._now())
        self._crash_point('suspend:power-requested')
        try:
            self._power(record, 'suspend')
        except Exception as exc:
            # A BMC that timed out may still act on the command, or answer the
            # next one. The host is empty and disabled, and a suspend sent
            # twice is harmless: as for a host slow to go down, the power
            # status is asked (and the command sent again) every cycle until
            # suspend_timeout, then the host goes to error.
            LOG.warning('%s: suspend command failed: %s; the power status is asked again '
                        'each cycle until suspend_timeout', host, exc)
            return
        self._crash_point('suspend:power-sent')
        LOG.info('%s: empty, suspend command sent; waiting for it to go down', host)

    def _confirm_suspended(self, record, service):
        host = record['host']
        if self.nova.servers_on_host(host):
            # Something landed despite the disabled service (a forced move):
            # never leave servers on a sleeping host. Power it back on at once
            # and leave it in error for an admin to look at.
            try:
                self._power(record, 'wake')
            except Exception as exc:
                LOG.error('%s: wake command failed: %s', host, exc)
            self._suspend_failed(record, 'servers appeared on %s while it was being '
                                 'suspended; wake command sent' % host)
            return
        down = service['state'] == 'down'
        if not down:
            try:
                power = self._power(record, 'status')
                down = power in ('off', 'suspended')
                if power == 'on':
                    # The command may never have left (crash right after the
                    # request was recorded): suspending twice is harmless.
                    LOG.info('%s: still on, sending the suspend command again', host)
                    self._power(record, 'suspend')
            except Exception as exc:
                LOG.warning('%s: power status unavailable: %s', host, exc)
        if down:
            drs_hosts.transition_at(self.db, host, drs_hosts.SUSPENDING,
                                    record['state_version'], drs_hosts.SUSPENDED,
                                    record['state_reason'])
            LOG.info('%s: suspended', host)
        elif self._now() - record['power_requested_at'] > self.suspend_timeout:
            self._suspend_failed(record, 'host did not go down within %ds of the suspend '
                                 'command' % self.suspend_timeout.total_seconds())

    def _suspend_failed(self, record, reason, **changes):
        """A suspend whose power command left but did not end in ``suspended``."""
        LOG.error('%s: %s', record['host'], reason)
        drs_hosts.transition_at(self.db, record['host'], drs_hosts.SUSPENDING,
                                record['state_version'], drs_hosts.ERROR, reason, **changes)

    def _power(self, record, command):
        """Send ``command`` (suspend, wake, status) to the host's power driver."""
        driver, target = self.power_drivers(record)
        return getattr(driver, command)(target)

    def _give_up(self, record, reason):
        """A host that cannot be emptied: abandon the suspend, or keep trying maintenance.

        True when the evacuation must stop (suspend abandoned); a maintenance
        entry records the reason and goes on moving the other servers.
        """
        host = record['host']
        if record['suspend_state'] == drs_hosts.ENTERING_MAINTENANCE:
            LOG.warning('%s: cannot enter maintenance yet: %s', host, reason)
            self._check(record, state_reason='cannot enter maintenance yet: %s' % reason)
            return False
        LOG.warning('%s: suspend abandoned: %s', host, reason)
        if drs_hosts.transition_at(self.db, host, drs_hosts.SUSPENDING,
                                   record['state_version'], drs_hosts.ACTIVE,
                                   'suspend abandoned: %s' % reason) is None:
            raise evacuation.Overtaken(host)
        self.close_abandoned_evacuations('aborted', source=host)
        current = drs_hosts.get(self.db, host)
        if current['disabled_by_drs']:
            self._reenable(current, 'abort:service-enabled')
        return True

    # -- waking -----------------------------------------------------------
    def _advance_waking(self, record):
        host = record['host']
        if record['power_requested_at'] is None:
            self._remember_heartbeat(record, self.nova.compute_service(host))
            self._check(record, power_requested_at=self._now())
            self._crash_point('wake:power-requested')
            try:
                self._power(record, 'wake')
            except Exception as exc:
                self._wake_failed(record, 'wake command failed: %s' % exc)
                return
            self._crash_point('wake:power-sent')
            return
        service = self.nova.compute_service(host)
        if self._reported_since_wake(record, service):
            self._seen_at_wake.pop((host, record['state_version']), None)
            if service['status'] == 'disabled' and record['disabled_by_drs']:
                self._check(record)
                self.nova.enable_service(service['id'])
                self._crash_point('wake:service-enabled')
                self._check(record, disabled_by_drs=False)
            # A wake that worked ends any earlier wake failure.
            if drs_hosts.transition_at(self.db, host, drs_hosts.WAKING,
                                       record['state_version'], drs_hosts.ACTIVE,
                                       'woken: nova-compute reports up',
                                       wake_failed=False) is not None:
                self.budget.woke(host)
                LOG.info('%s: awake and enabled', host)
        elif self._now() - record['power_requested_at'] > self.wake_timeout:
            self._wake_failed(record, 'nova-compute did not report up within %ds'
                              % self.wake_timeout.total_seconds())
        else:
            # Powering on twice is harmless, and covers a command that never
            # left because the daemon died right after recording it.
            try:
                self._power(record, 'wake')
            except Exception as exc:
                LOG.warning('%s: re-sending the wake command failed: %s', host, exc)

    @staticmethod
    def _heartbeat(service):
        """(heartbeat, up) of a nova-compute service, both as nova sees them."""
        if service is None:
            return None, False
        return nova_api.parse_time(service.get('updated_at')), service['state'] == 'up'

    def _remember_heartbeat(self, record, service):
        host = record['host']
        for key in [key for key in self._seen_at_wake if key[0] == host]:
            del self._seen_at_wake[key]   # an earlier wake of the host, ended
        self._seen_at_wake[(host, record['state_version'])] = self._heartbeat(service)

    def _reported_since_wake(self, record, service):
        """Whether nova-compute reported after the wake command.

        Its heartbeat is compared with the one nova showed when the command
        left, both stamped by nova: never with this daemon's clock. A
        service nova showed down then and up now has reported too. A
        daemon that did not send the command (restart, new leader) takes
        nova up with the power driver reporting the host on.
        """
        heartbeat, up = self._heartbeat(service)
        if not up:
            return False
        seen = self._seen_at_wake.get((record['host'], record['state_version']))
        if seen is not None:
            before, was_up = seen
            return not was_up or (heartbeat is not None and before is not None
                                  and heartbeat > before)
        try:
            return self._power(record, 'status') == 'on'
        except Exception as exc:
            LOG.warning('%s: power status unavailable: %s', record['host'], exc)
            return False

    def _wake_failed(self, record, reason):
        self._seen_at_wake.pop((record['host'], record['state_version']), None)
        LOG.error('%s: %s; excluded from suspension until an admin clears it or a wake '
                  'succeeds', record['host'], reason)
        drs_hosts.transition_at(self.db, record['host'], drs_hosts.WAKING,
                                record['state_version'], drs_hosts.ERROR, reason,
                                wake_failed=True)

    # -- reconcile --------------------------------------------------------
    def _reenable(self, record, point='reconcile:service-enabled'):
        """An active host still disabled by us (abandoned or cancelled suspend,
        maintenance ended, crash mid-abort): enable it."""
        service = self.nova.compute_service(record['host'])
        if service is not None and service['status'] == 'disabled':
            self._check(record)
            self.nova.enable_service(service['id'])
            self._crash_point(point)
        self._check(record, disabled_by_drs=False)
        LOG.info('%s: re-enabled the nova-compute service nova-drs had disabled',
                 record['host'])
