"""TEST-ONLY power driver: a mini-cloud "host" is a nova-compute process.

Never shipped: it lives in tests/integration and is registered (entry point
``process`` in ``nova_drs.power_drivers``) only inside .venv-cloud by
``cloud.register_test_power_driver()``. Production drivers are in
``nova_drs/power/``.

Suspend = SIGTERM to the host's nova-compute process (by the PID the
mini-cloud recorded), so nova sees the service go down like a powered-off
host. Wake = start that nova-compute again through ``cloud.py start-compute``
(the fake driver keeps its node identity, so it returns as the same resource
provider). Status = ``on`` while the process lives, else ``off``.
"""

import os
import signal
import subprocess
import sys

from nova_drs.power import base

CLOUD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cloud.py')


class ProcessPowerDriver(base.PowerDriver):
    """Stops and starts the nova-compute process of a mini-cloud host.

    Option ``workdir`` (required): the mini-cloud's work directory, whose
    ``pids/nova-compute-<host>.pid`` names the process. Mode ``off`` only.
    """

    NAME = 'process'
    MODES = (base.MODE_OFF,)
    OPTIONS = {
        'type': 'object',
        'properties': {'workdir': {'type': 'string', 'minLength': 1}},
        'required': ['workdir'],
        'additionalProperties': False,
    }

    @staticmethod
    def _pidfile(target):
        return os.path.join(target.options['workdir'], 'pids',
                            'nova-compute-%s.pid' % target.name)

    def _pid(self, target):
        try:
            with open(self._pidfile(target)) as handle:
                return int(handle.read().strip())
        except (OSError, ValueError):
            return None

    @staticmethod
    def _alive(pid):
        try:
            with open('/proc/%d/stat' % pid) as handle:
                return handle.read().split(')')[-1].split()[0] != 'Z'
        except OSError:
            return False

    def _suspend(self, target):
        pid = self._pid(target)
        if pid is None or not self._alive(pid):
            raise base.PowerError('no running nova-compute for host %s (%s)'
                                  % (target.name, self._pidfile(target)))
        # The mini-cloud starts each compute in its own session: pgid == pid.
        os.killpg(pid, signal.SIGTERM)

    def _wake(self, target):
        pid = self._pid(target)
        if pid is not None and self._alive(pid):
            return
        env = dict(os.environ, NOVA_DRS_CLOUD_DIR=target.options['workdir'])
        subprocess.run([sys.executable, CLOUD_SCRIPT, 'start-compute', target.name],
                       env=env, check=True, capture_output=True, timeout=60)

    def _status(self, target):
        pid = self._pid(target)
        return base.ON if pid is not None and self._alive(pid) else base.OFF
