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

"""The daemon's record -> (driver, target) lookup (daemon/power.py) at scale.

The cycle asks it twice for every host whether the host is suspendable. A
driver is looked up (entry points, stevedore) once per name for the daemon's
life, whether the lookup succeeds or not: before, every host without a driver
rescanned every installed package's entry points, twice a cycle.
"""

from oslo_config import fixture as config_fixture
import pytest

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.daemon import power
from nova_drs.power import loader

HOSTS = 1000


@pytest.fixture
def lookup(monkeypatch):
    fixture = config_fixture.Config(drs_conf.CONF)
    fixture.setUp()
    loads = []
    real = loader.get_driver

    def counting(name, conf):
        loads.append(name)
        return real(name, conf)

    monkeypatch.setattr(loader, 'get_driver', counting)
    yield power.drivers_for(drs_conf.CONF, database=None), loads
    fixture.cleanUp()


def _record(host, driver):
    return {'host': host, 'power_settings': (driver, None, {}, None)}


def test_hosts_without_a_driver_load_nothing_again(lookup):
    find, loads = lookup
    errors = set()
    for _cycle in range(2):  # the cycle asks twice
        for number in range(HOSTS):
            with pytest.raises(exception.PowerError) as caught:
                find(_record('host%d' % number, None))
            errors.add(str(caught.value))
    assert loads == [None]
    # Each host still gets the error that names the choices.
    assert errors == {'no power driver is set (available: %s)' % ', '.join(loader.names())}


def test_an_unknown_driver_is_looked_up_once_and_still_refused(lookup):
    find, loads = lookup
    for number in range(HOSTS):
        with pytest.raises(exception.PowerError, match="unknown power driver 'nonesuch'"):
            find(_record('host%d' % number, 'nonesuch'))
    assert loads == ['nonesuch']


def test_each_driver_is_loaded_once_and_every_host_gets_its_own_target(lookup):
    find, loads = lookup
    found = [find(_record('host%d' % number, ('noop', 'ssh')[number % 2]))
             for number in range(HOSTS)]
    assert sorted(loads) == ['noop', 'ssh']
    assert {type(driver).__name__ for driver, _ in found} == {'NoopDriver', 'SshDriver'}
    assert [target.name for _, target in found] == ['host%d' % n for n in range(HOSTS)]
