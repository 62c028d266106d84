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

"""nova-drs configuration.

Every option lives in nova's ``CONF`` (operators put them in nova.conf) under
groups of our own, so nothing collides with nova. Each module in ``_MODULES``
lists its options, ``list_opts()``, which ``register_opts`` registers and
``opts.list_opts`` feeds to ``oslo-config-generator --namespace nova_drs``.
"""

from oslo_config import cfg

from nova_drs.conf import coordination
from nova_drs.conf import database
from nova_drs.conf import decision
from nova_drs.conf import drs
from nova_drs.conf import loadbalancer
from nova_drs.conf import metrics
from nova_drs.conf import oscillation
from nova_drs.conf import power
from nova_drs.conf import resources
from nova_drs.conf import retention
from nova_drs.conf import scale
from nova_drs.conf import scheduler
from nova_drs.conf import stats

CONF = cfg.CONF

_MODULES = (
    drs,
    database,
    loadbalancer,
    decision,
    scheduler,
    resources,
    stats,
    coordination,
    power,
    scale,
    metrics,
    oscillation,
    retention,
)


def register_opts(conf=CONF):
    for module in _MODULES:
        if hasattr(module, 'register_opts'):
            # More than it lists: loadbalancer.py lets keystoneauth register
            # [drs_auth]'s session and auth-plugin options.
            module.register_opts(conf)
            continue
        for group, opts in module.list_opts():
            conf.register_opts(opts, group=group)


def all_opts():
    """(group, [opts]) pairs of every nova-drs option, in documentation order."""
    pairs = []
    for module in _MODULES:
        pairs.extend(module.list_opts())
    return pairs


def validate(conf=CONF):
    """Read every nova-drs option once so a bad value fails at startup.

    oslo.config only checks a value when it is first read; without this an
    out-of-range value would surface as a traceback in the middle of a cycle.
    """
    from nova_drs.conf import startup
    startup.validate(conf)


register_opts(CONF)
