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

"""Tempest plugin of nova-drs (entry point ``tempest.test_plugins``: ``nova_drs``)."""

import os

from tempest import config
from tempest.test_discover import plugins

from nova_drs.tests.tempest import config as drs_config


class NovaDrsTempestPlugin(plugins.TempestPlugin):
    """Loads nova_drs/tests/tempest and registers the ``[nova_drs]`` options."""

    def load_tests(self):
        here = os.path.dirname(os.path.abspath(__file__))
        top_level = os.path.dirname(os.path.dirname(os.path.dirname(here)))
        return here, top_level

    def register_opts(self, conf):
        config.register_opt_group(conf, drs_config.group, drs_config.opts)

    def get_opt_lists(self):
        return [(drs_config.group.name, drs_config.opts)]
