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

"""Scalers: how a decided scale is carried out on the chosen host.

Selected by ``[drs_scale] scaler`` from the stevedore namespace
``nova_drs.scalers``. The shipped ``resize`` scaler uses nova's cold resize
(the guest restarts; nova 34 has no live resize). A hypervisor able to
hot-plug vCPUs/RAM can ship a scaler whose ``start`` scales in place without
a restart and whose ``finish``/``revert`` are no-ops; the allocation logic,
retries and reporting stay the same.
"""

from stevedore import driver
from stevedore import exception as stevedore_exception

from nova_drs import exception

NAMESPACE = 'nova_drs.scalers'


class ResizeScaler:
    """nova resize, steered by ScaleTargetFilter, then confirm (or revert)."""

    def start(self, nova, server_id, flavor_id):
        nova.resize(server_id, flavor_id)

    def finish(self, nova, server_id):
        nova.confirm_resize(server_id)

    def revert(self, nova, server_id):
        nova.revert_resize(server_id)


def load(name):
    """An instance of the scaler called ``name``; ScalerError naming it if unknown."""
    try:
        return driver.DriverManager(NAMESPACE, name, invoke_on_load=True,
                                    on_load_failure_callback=_raise,
                                    warn_on_missing_entrypoint=False).driver
    except (stevedore_exception.NoMatches, RuntimeError):
        raise exception.ScalerError('unknown scaler %r in [drs_scale] scaler' % name) from None
    except Exception as exc:  # the plugin's own import or constructor failed
        raise exception.ScalerError('[drs_scale] scaler %r cannot be loaded: %s: %s'
                                    % (name, type(exc).__name__, exc)) from None


def _raise(_manager, _entry_point, exc):
    raise exc
