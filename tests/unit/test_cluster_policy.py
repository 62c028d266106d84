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

"""One resolver of a host's DRS policy, one option, one warn-once."""

import logging

from oslo_config import cfg

from nova_drs import aggregate_keys
from nova_drs import cluster_policy
from nova_drs.conf import loadbalancer
from tests import config_files


def test_unlisted_host_gets_the_default_and_one_aggregate_decides():
    resolver = cluster_policy.Resolver()
    assert resolver.host_policy([], 'none') == 'none'
    assert resolver.host_policy([('misc', {'other': '1'})], 'none') == 'none'
    assert resolver.host_policy([('c1', {'drs_policy': ' Power_Saving '})],
                                'none') == 'power_saving'


def test_conflicts_and_invalid_values_fall_back_with_one_warning(caplog):
    resolver = cluster_policy.Resolver()
    caplog.set_level(logging.WARNING, aggregate_keys.LOG.name)
    for _ in range(3):
        assert resolver.host_policy([('c1', {'drs_policy': 'chaos'})], 'none') == 'none'
        assert resolver.host_policy([('c1', {'drs_policy': 'power_saving'}),
                                     ('c2', {'drs_policy': 'even_distribution'})],
                                    'none') == 'none'
        assert resolver.automation('c1', {'drs_automation': 'sometimes'}, 'manual') == 'manual'
    text = caplog.text
    assert text.count("ignoring invalid metadata drs_policy='chaos'") == 1
    assert text.count("drs_policy='even_distribution,power_saving'") == 1
    assert text.count("drs_automation='sometimes'") == 1
    assert resolver.automation('c1', {'drs_automation': 'Manual'}, 'automatic') == 'manual'
    assert resolver.automation('c1', {}, 'automatic') == 'automatic'


def test_old_option_name_still_read(tmp_path):
    conf = config_files.load(tmp_path, '[drs_scheduler]\ndefault_policy = power_saving\n',
                             register=loadbalancer.register_opts)
    assert conf.loadbalancer.default_policy == 'power_saving'
    fresh = cfg.ConfigOpts()
    loadbalancer.register_opts(fresh)
    fresh([])
    assert fresh.loadbalancer.default_policy == 'none'
