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

"""A suspend command the BMC did not answer is not the end of the suspend.

The host is empty and disabled; a BMC that timed out may still act, or
answer the next call. The lifecycle asks the power status (and sends the
command again) every cycle until ``suspend_timeout``, then gives up with the
host in error, as for a host slow to go down. Before, the first timeout put
the host in error at once, powered on and empty, until an admin came (the
closed-loop twin's ``bmc_unresponsive`` fault: empty hosts left on). Real
lifecycle and SQLite DRS database; nova and the BMC are stand-ins.
"""

import datetime

import pytest

from nova_drs import exception
from nova_drs.daemon import lifecycle
from nova_drs.db import hosts as drs_hosts
from nova_drs.power import base
from tests.unit.daemon import lifecycle_steps
from tests.unit.daemon import test_lifecycle_faults

START = datetime.datetime(2026, 11, 27, 12, 0, 0)
SUSPEND_TIMEOUT = 600


class EmptyHostNova(test_lifecycle_faults.Nova):
    """host1: no servers, no allocations, nova-compute disabled and up."""

    def __init__(self):
        super().__init__(failing={})

    def compute_service(self, host):
        return {'id': 7, 'host': host, 'status': 'disabled', 'state': 'up'}


class Bmc:
    """Answers each call from a script: a value, or an exception raised."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def __call__(self, record):
        return self, base.PowerTarget(name=record['host'], mac=None, options={},
                                      mode=base.MODE_OFF)

    def can_suspend(self, options):
        return True

    def can_wake(self, options):
        return True

    def _answer(self, command):
        self.calls.append(command)
        answer = self.answers[command].pop(0) if self.answers[command] else None
        if isinstance(answer, Exception):
            raise answer
        return answer

    def suspend(self, target):
        return self._answer('suspend')

    def status(self, target):
        return self._answer('status')


@pytest.fixture
def database(database):
    """The unit tier's database with host1 suspending, emptied and disabled."""
    lifecycle_steps.suspending(database, 'host1')
    drs_hosts.set_fields_at(database, 'host1', 'suspending',
                            drs_hosts.get(database, 'host1')['state_version'],
                            disabled_by_drs=True)
    return database


def _cycles(database, bmc, seconds):
    """One lifecycle step per entry of ``seconds`` (time since the first)."""
    nova = EmptyHostNova()
    for offset in seconds:
        now = START + datetime.timedelta(seconds=offset)
        steps = lifecycle.HostLifecycle(nova, database, bmc, SUSPEND_TIMEOUT, 900, 600,
                                        clock=lambda now=now: now)
        lifecycle_steps.observed(steps).advance(drs_hosts.get(database, 'host1'))
    return drs_hosts.get(database, 'host1')


def test_a_suspend_command_that_timed_out_is_retried_until_the_host_is_down(database):
    bmc = Bmc({'suspend': [exception.PowerError('BMC did not answer within 30 s'), None],
               'status': [exception.PowerError('BMC did not answer within 30 s'), 'on', 'off']})
    record = _cycles(database, bmc, [0])
    assert record['suspend_state'] == drs_hosts.SUSPENDING
    assert record['power_requested_at'] is not None

    record = _cycles(database, bmc, [60, 120, 180])
    assert bmc.calls == ['suspend', 'status', 'status', 'suspend', 'status']
    assert record['suspend_state'] == drs_hosts.SUSPENDED
    assert not record['wake_failed']


def test_a_bmc_that_never_answers_puts_the_host_in_error_after_suspend_timeout(database):
    silent = exception.PowerError('BMC did not answer within 30 s')
    bmc = Bmc({'suspend': [silent], 'status': [silent] * 20})
    record = _cycles(database, bmc, range(0, SUSPEND_TIMEOUT, 60))
    assert record['suspend_state'] == drs_hosts.SUSPENDING

    record = _cycles(database, bmc, [SUSPEND_TIMEOUT + 60])
    assert record['suspend_state'] == drs_hosts.ERROR
    assert 'did not go down within 600s' in record['state_reason']
