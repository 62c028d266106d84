"""Build decision-core objects from ``[loadbalancer]`` options.

The core takes algorithm objects; this module is the only place that maps
configured names to classes, through stevedore entry points, so operators
can ship their own algorithms in a separate package.
"""

from stevedore import driver

from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import policy as policy_mod

NAMESPACE = 'nova_drs.loadbalancer.'


def plugin(kind, name):
    """Class registered as ``name`` in ``nova_drs.loadbalancer.<kind>``."""
    manager = driver.DriverManager(NAMESPACE + kind, name, invoke_on_load=False)
    return manager.driver


def load_policy(conf):
    opts = conf.loadbalancer
    cls = plugin('policy', opts.policy)
    if opts.policy == 'drs':
        return cls(window=opts.history_window, quantile=opts.history_quantile,
                   overload_now=opts.overload_cpu, overload_predicted=opts.overload_predicted,
                   place_now=opts.place_cpu, place_predicted=opts.place_predicted,
                   underload=opts.underload_predicted, cooldown=opts.migration_cooldown)
    if opts.policy == 'even_distribution':
        return cls(cooldown=opts.migration_cooldown)
    detector = plugin('overload', opts.overload_detector)(opts.overload_param)
    selection = plugin('vm_selection', opts.vm_selection)()
    placement = plugin('placement', opts.placement)(detector)
    underload_cls = plugin('underload', opts.underload_detector)
    if opts.underload_detector == 'mean_threshold':
        underload = underload_cls(opts.underload_cpu, opts.underload_memory)
    else:
        underload = underload_cls()
    wake = (policy_mod.UnsuspendWhenHot(opts.unsuspend_cpu, opts.unsuspend_memory)
            if opts.unsuspend_when_hot else None)
    return cls(detector, selection, placement, underload, wake)


def load_limits(conf):
    return model.SafetyLimits(conf.loadbalancer.min_active_hosts,
                              conf.loadbalancer.hosts_in_reserve)
