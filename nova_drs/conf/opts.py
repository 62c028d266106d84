"""Entry point for ``oslo-config-generator --namespace nova_drs``."""

from nova_drs import conf


def list_opts():
    return conf.all_opts()
