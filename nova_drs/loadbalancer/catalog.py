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

"""Named policies, so the simulator and benchmarks need no plugin loader.

``<detector>_<selection>_<parameter>`` builds the CloudSim combination of
that name (e.g. ``lr_mmt_1.2``); ``drs`` is nova-drs's default policy and
``even_distribution`` the load-spreading one.
"""

from nova_drs.loadbalancer import drs
from nova_drs.loadbalancer import even
from nova_drs.loadbalancer import overload
from nova_drs.loadbalancer import placement
from nova_drs.loadbalancer import policy
from nova_drs.loadbalancer import selection
from nova_drs.loadbalancer import underload

DETECTORS = {
    'thr': overload.StaticThreshold,
    'iqr': overload.InterQuartileRange,
    'mad': overload.MedianAbsoluteDeviation,
    'lr': overload.LocalRegression,
    'lrr': overload.LocalRegressionRobust,
}
SELECTIONS = {
    'mmt': selection.MinimumMigrationTime,
    'mc': selection.MaximumCorrelation,
    'rs': selection.RandomSelection,
    'mu': selection.MinimumUtilisation,
}
PARAMETRISED = {'drs': drs.DrsPolicy, 'even_distribution': even.EvenDistributionPolicy}
CLOUDSIM_POLICIES = ('thr_mmt_0.8', 'iqr_mmt_1.5', 'mad_mmt_2.5', 'lr_mmt_1.2', 'lrr_mmt_1.2')


def cloudsim_policy(detector, vm_selection, parameter):
    det = DETECTORS[detector](float(parameter))
    return policy.ConsolidationPolicy(det, SELECTIONS[vm_selection](),
                                      placement.PowerAwareBestFit(det), underload.LeastUtilised())


def by_name(name):
    """Policy object for a name, with its default parameters (the loader,
    nova_drs.loadbalancer_plugins.by_name, builds them with others).
    ValueError with the accepted forms."""
    if name in PARAMETRISED:
        return PARAMETRISED[name]()
    parts = name.split('_')
    try:
        detector, vm_selection, parameter = parts
        return cloudsim_policy(detector, vm_selection, float(parameter))
    except (ValueError, KeyError):
        raise ValueError('unknown policy %r: use "drs", "even_distribution" or '
                         '<%s>_<%s>_<number>, e.g. lr_mmt_1.2'
                         % (name, '|'.join(DETECTORS), '|'.join(SELECTIONS))) from None
