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

"""Find power drivers by name in the stevedore namespace ``nova_drs.power_drivers``.

Other packages can add drivers by declaring an entry point there; the name
stored in ``drs_hosts.power_driver`` selects one per host.
"""

import importlib.metadata

from stevedore import driver as stevedore_driver
from stevedore import exception as stevedore_exception

from nova_drs import exception
from nova_drs.power import base

NAMESPACE = 'nova_drs.power_drivers'


def names():
    """Sorted names of the installed drivers."""
    return sorted({entry_point.name for entry_point
                   in importlib.metadata.entry_points(group=NAMESPACE)})


def _raise_load_failure(manager, entry_point, exc):
    raise exception.PowerError('power driver %r failed to load: %s'
                               % (entry_point.name, exc)) from None


def driver_class(name):
    """The driver class called ``name``; PowerError naming the choices if none."""
    if not name:
        raise exception.PowerError('no power driver is set (available: %s)'
                                   % ', '.join(names()))
    try:
        manager = stevedore_driver.DriverManager(
            NAMESPACE, name, invoke_on_load=False,
            on_load_failure_callback=_raise_load_failure)
    except stevedore_exception.NoMatches:
        raise exception.PowerError('unknown power driver %r (available: %s)'
                                   % (str(name)[:64], ', '.join(names()))) from None
    return manager.driver


def measuring():
    """Names of the installed drivers whose BMC reports the watts drawn."""
    found = []
    for name in names():
        try:
            if driver_class(name).MEASURES:
                found.append(name)
        except exception.PowerError:
            continue  # a broken plugin measures nothing; the lifecycle reports it
    return found


def get_driver(name, conf):
    """An instance of the driver called ``name``, configured from ``conf``."""
    return driver_class(name)(conf)


def check(name, mode, options):
    """Raise PowerError unless the driver exists and accepts mode and options.

    What the API runs on a ``set_power`` body before storing it.
    """
    driver_class(name).check(mode, options)


def redact(options, name=None):
    """``options`` with secrets hidden, using driver ``name``'s schema if known."""
    try:
        return driver_class(name).redact(options) if name else base.redact(options)
    except exception.PowerError:
        return base.redact(options)
