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

from oslo_config import cfg
import pytest

from nova_drs.conf import power


@pytest.fixture
def conf(tmp_path):
    """A private ConfigOpts with [drs_power] registered, short timeouts, and
    the test's tmp_path as files_dir (where the peers' keys are)."""
    config = cfg.ConfigOpts()
    [(group, opts)] = power.list_opts()
    config.register_opts(opts, group=group)
    config([], project='nova-drs-test')
    config.set_override('timeout', 10, group='drs_power')
    config.set_override('files_dir', str(tmp_path), group='drs_power')
    yield config
    config.reset()
