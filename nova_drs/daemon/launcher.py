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

"""``nova-loadbalancer`` as an oslo.service service: cycles, SIGTERM, SIGHUP.

Cycles run one after the other in one thread. A cycle is made of persisted
steps (every state change is written before it is made), so stopping between
two cycles loses nothing and the next start resumes where this one stopped.

* SIGTERM: oslo.service calls ``stop``; the running cycle finishes, no new one
  starts, the process exits. ``[DEFAULT] graceful_shutdown_timeout`` (oslo.service)
  bounds the wait: past it oslo.service ends the process, and the next start
  resumes from the DRS database.
* SIGHUP: oslo.service re-reads the configuration files (mutable options: every
  ``[loadbalancer]`` option) and calls ``reset``; the next cycle is built from
  the new values. A new value the daemon cannot use is logged and the cycle
  keeps the old ones.
* Watchdog: each cycle runs in a thread of its own, joined for at most
  ``[loadbalancer] cycle_timeout``. A cycle still running then (a call that
  hangs) is abandoned: logged, the leadership released at once so a standby
  takes over, and no new cycle starts until the abandoned one has returned
  (a Python thread cannot be killed; every nova and placement request is
  bounded by ``[drs_auth] timeout``). Once released, ``still_leader`` answers
  False, so the abandoned cycle acts on nothing more when its call returns.
"""

import threading

from oslo_log import log as logging
from oslo_service import service

from nova_drs import conf as drs_conf
from nova_drs.conf import startup

LOG = logging.getLogger(__name__)


class LoadBalancerService(service.Service):
    """Runs ``build()``'s cycle every ``[loadbalancer] period`` until stopped."""

    def __init__(self, conf, build, coordinator=None):
        super().__init__()
        self.conf = conf
        self._build = build
        self.coordinator = coordinator
        self.balancer = build()
        self._stopping = threading.Event()
        self._reload = threading.Event()
        self._thread = None
        self._cycle = None  # the thread of the running (or abandoned) cycle

    def start(self):
        super().start()
        startup.answer_signals_promptly(self.tg)
        if self._thread is None:
            LOG.info('nova-loadbalancer started, period %ds, automation %s',
                     self.conf.loadbalancer.period, self.conf.loadbalancer.automation)
            self._thread = threading.Thread(target=self._run, name='drs-cycles',
                                            daemon=True)
            self._thread.start()

    def _run(self):
        while not self._stopping.is_set():
            if self._cycle is not None and self._cycle.is_alive():
                LOG.warning('the abandoned cycle has not returned yet; standing by')
            else:
                if self._reload.is_set():
                    self._reload.clear()
                    self._rebuild()
                self._watch(self._start_cycle())
            self._stopping.wait(self.conf.loadbalancer.period)
        LOG.info('nova-loadbalancer stopped between two cycles')

    def _start_cycle(self):
        self._cycle = threading.Thread(target=self._one_cycle, args=(self.balancer,),
                                       name='drs-cycle', daemon=True)
        self._cycle.start()
        return self._cycle

    @staticmethod
    def _one_cycle(balancer):
        try:
            LOG.info('cycle: %s', balancer.run_cycle())
        except Exception:
            LOG.exception('cycle failed; the next one starts from a fresh view')

    def _watch(self, cycle):
        """Wait for ``cycle`` up to cycle_timeout; abandon it past that."""
        timeout = self.conf.loadbalancer.cycle_timeout
        cycle.join(timeout)
        if not cycle.is_alive():
            return
        LOG.error('cycle still running after [loadbalancer] cycle_timeout (%d s): '
                  'abandoned; leadership released, standing by until it returns',
                  timeout)
        if self.coordinator is not None:
            self.coordinator.step_down('cycle overran cycle_timeout (%d s)' % timeout)

    def _rebuild(self):
        try:
            drs_conf.validate(self.conf)
            balancer = self._build()
        except Exception as exc:
            LOG.error('configuration reloaded but not usable, keeping the previous '
                      'one: %s', exc)
            return
        self.balancer = balancer
        LOG.info('configuration reloaded: period %ds, automation %s, policy %s',
                 self.conf.loadbalancer.period, self.conf.loadbalancer.automation,
                 self.conf.loadbalancer.policy)

    def reset(self):
        """SIGHUP: the options were re-read; the next cycle uses them."""
        self._reload.set()

    def stop(self, graceful=False):
        """SIGTERM: let the running cycle finish, then release leadership.

        oslo.service armed SIGALRM with ``graceful_shutdown_timeout`` and reset
        its handler: a cycle that runs longer ends the process there.
        """
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        if self.coordinator is not None:
            self.coordinator.stop()
            self.coordinator = None
        super().stop(graceful)
