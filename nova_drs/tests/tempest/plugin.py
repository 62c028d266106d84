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
