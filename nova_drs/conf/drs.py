"""General nova-drs options: group ``[drs]``."""

from oslo_config import cfg

drs_group = cfg.OptGroup(
    'drs', title='nova-drs general options',
    help='Options shared by every nova-drs component (scheduler plugins, '
         'compute monitor, loadbalancer daemon, API filter).')

drs_opts = [
    cfg.StrOpt('state_path',
               default='/var/lib/nova-drs',
               help='Directory where nova-drs keeps local state: the embedded '
                    'SQLite database (when [drs_database] connection is not '
                    'set) and the single-node coordination lock file.'),
]


def register_opts(conf):
    conf.register_group(drs_group)
    conf.register_opts(drs_opts, group=drs_group)


def list_opts():
    return [(drs_group, drs_opts)]
