import pytest
from oslo_config import cfg

from nova_drs.conf import power


@pytest.fixture
def conf():
    """A private ConfigOpts with [drs_power] registered and short timeouts."""
    config = cfg.ConfigOpts()
    power.register_opts(config)
    config([], project='nova-drs-test')
    config.set_override('timeout', 10, group='drs_power')
    yield config
    config.reset()
