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

"""Options of the nova-loadbalancer daemon: groups ``[loadbalancer]`` and ``[drs_auth]``.

Decision-algorithm options (policy, thresholds) live in ``decision.py`` in
the same ``[loadbalancer]`` group; these are about running the cycle safely.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from nova_drs.conf import policy_names

loadbalancer_group = cfg.OptGroup(
    'loadbalancer', title='nova-loadbalancer daemon',
    help='The nova-loadbalancer daemon: observes the cloud through the nova '
         'and placement APIs, plans with the decision core, live-migrates, '
         'suspends and wakes hosts.')

daemon_opts = [
    cfg.IntOpt('period', default=60, min=5, max=3600,
               help='Seconds between two cycles (observe, decide, act).'),
    cfg.StrOpt('automation', default='automatic', choices=[
                   ('automatic', 'execute plans as they are computed'),
                   ('manual', 'store plans; execute only what an admin approves')],
               help='Global automation level, the default of every cluster. Per '
                    'cluster, aggregate metadata "drs_automation" overrides it.'),
    cfg.StrOpt('default_policy', default=policy_names.NONE,
               choices=policy_names.POLICIES, deprecated_group='drs_scheduler',
               help='DRS policy of hosts outside every aggregate with "drs_policy" '
                    'metadata (and of hosts whose aggregates disagree or set an '
                    'invalid value), for the scheduler weighers and the daemon '
                    'alike. "none" leaves them alone: no weigher acts, the daemon '
                    'never migrates to, from or suspends them. "power_saving" '
                    'packs new instances and consolidates (suspending emptied '
                    'hosts); "even_distribution" spreads new instances and moves '
                    'servers off hosts loaded above high_utilization. Formerly '
                    '[drs_scheduler] default_policy (still read).'),
    cfg.IntOpt('stats_max_age', default=600, min=60,
               help='Seconds after which a host or instance without a newer '
                    'utilisation sample is left alone (never a source, target '
                    'or suspend candidate).'),
    cfg.IntOpt('history_length', default=12, min=1, max=288,
               help='Utilisation samples per host/instance handed to the '
                    'decision core.'),
    cfg.IntOpt('migration_timeout', default=900, min=30,
               help='Seconds a live migration may run before the daemon aborts '
                    'it (the instance stays on its source).'),
    cfg.IntOpt('max_migrations_per_host', default=2, min=1,
               help='Concurrent migrations leaving one source host.'),
    cfg.IntOpt('max_migrations_per_destination', default=2, min=1,
               help='Concurrent migrations arriving on one destination host. '
                    'A planned move names its destination and counts on it; an '
                    'evacuation (suspend, maintenance) lets nova choose, so until '
                    'nova lists its destination it takes one free slot of the hosts '
                    'that can receive servers, and evacuations wait while every such '
                    'slot is taken. nova-scheduler\'s MigrationLimitFilter reads it '
                    'too and keeps every move nova places (live or cold migration, '
                    'resize, evacuation) off hosts already receiving this many: set '
                    'it in the nova.conf both read.'),
    cfg.IntOpt('max_migrations_per_cluster', default=10, min=1,
               help='Concurrent migrations within one cluster.'),
    cfg.IntOpt('decision_retention', default=24, min=1, max=24 * 90,
               help='Hours the decisions of each cycle (why every host and '
                    'server got its verdict, read by "openstack drs explain") '
                    'are kept; older ones are deleted every cycle.'),
    cfg.IntOpt('plan_retention', default=24 * 7, min=0,
               help='Hours a finished plan (done, rejected or superseded, with '
                    'the progress of each of its actions) is kept after its '
                    'last change; older ones are deleted every cycle. Pending, '
                    'approved and executing plans are never deleted. 0 keeps '
                    'every plan.'),
    cfg.IntOpt('host_cooldown', default=1800, min=0,
               help='Seconds after a host became active again (woken, or a '
                    'suspend abandoned) during which it is not suspended '
                    'again: no suspend/wake ping-pong.'),
    cfg.IntOpt('suspend_timeout', default=600, min=30,
               help='Seconds after the suspend command within which the host '
                    'must be confirmed down; otherwise it goes to error.'),
    cfg.IntOpt('wake_timeout', default=900, min=30,
               help='Seconds after the wake command within which nova-compute '
                    'must report up; otherwise the host goes to error and the '
                    'next candidate is woken.'),
    cfg.BoolOpt('sync_overcommit', default=True,
                help='Re-run the per-aggregate allocation ratio sync into '
                     'placement every cycle (only changes are written). A host '
                     'the sync gave a ratio that no aggregate sets any more gets '
                     'nova\'s [DEFAULT] cpu/ram_allocation_ratio of this '
                     'nova.conf back, else initial_cpu/ram_allocation_ratio '
                     '(4.0 / 1.0 when not set here); a change leaving a host '
                     'over 100 % raises drs.overcommit.exceeded.'),
    cfg.IntOpt('full_refresh_cycles', default=30, min=1,
               help='Every this many cycles the daemon re-lists every server '
                    'instead of asking nova only for the servers changed since '
                    'the last cycle (changes-since). It also re-lists whenever '
                    'the incremental path sees something odd (a new or removed '
                    'compute host, a server on an unknown host, a failed '
                    'cycle). 1 re-lists every cycle.'),
    cfg.IntOpt('max_suspends_per_cycle', default=2, min=0,
               help='Hosts one cluster starts suspending (or entering '
                    'maintenance) in one cycle; the rest of the plan waits for '
                    'later cycles. 0 suspends nothing.'),
    cfg.IntOpt('max_wakes_per_cycle', default=5, min=0,
               help='Hosts one cluster starts waking in one cycle; the rest of '
                    'the plan waits for later cycles. 0 wakes nothing.'),
    cfg.IntOpt('cycle_timeout', default=600, min=1,
               help='Seconds one cycle may run. A cycle still running then '
                    '(a hung nova, placement or power call) is abandoned: '
                    'logged, the leadership released at once so a standby '
                    'takes over, and this daemon stays a standby until the '
                    'hung call returns. Every request it makes is bounded by '
                    '[drs_auth] timeout.'),
    cfg.ListOpt('opt_out_sources', default=['flavor_extra_spec'],
                item_type=cfg.types.String(choices=['flavor_extra_spec',
                                                    'server_metadata']),
                help='Where a server\'s "drs:automation" opt-out is read, '
                     'by nova-api (the suspend/maintenance actions) and '
                     'nova-loadbalancer alike: "flavor_extra_spec" (set by '
                     'admins, validated by nova-api) and, only if listed, '
                     '"server_metadata" (any member of the server\'s project '
                     'can set it). Server metadata, when listed, wins over the '
                     'flavor. An unknown value is ignored with one warning. '
                     'An empty list honours no opt-out.'),
]

# nova-loadbalancer re-reads these on SIGHUP and builds its next cycle from
# them (nova_drs/daemon/launcher.py).
for _opt in daemon_opts:
    _opt.mutable = True

auth_group = cfg.OptGroup(
    'drs_auth', title='Credentials of nova-loadbalancer',
    help='Keystone credentials the daemon uses for the compute and placement '
         'APIs (an admin service user). Same options as nova\'s [placement] '
         'section, e.g. auth_type = password, auth_url, username, password, '
         'project_name, user_domain_name, project_domain_name.')

#: Seconds any one nova or placement request may take ([drs_auth] timeout):
#: keystoneauth's own default is to wait forever.
REQUEST_TIMEOUT = 60

endpoint_opts = [
    cfg.StrOpt('region_name', help='Region of the compute and placement endpoints.'),
    cfg.ListOpt('valid_interfaces', default=['internal', 'public'],
                help='Endpoint interfaces to use, in order of preference.'),
]


def session_opts():
    """keystoneauth's session options, ``timeout`` with a default: a nova-api
    that accepts the connection and never answers must not hang a cycle."""
    opts = ks_loading.get_session_conf_options()
    for index, opt in enumerate(opts):
        if opt.dest == 'timeout':
            opts[index] = cfg.IntOpt(
                'timeout', default=REQUEST_TIMEOUT, min=1,
                help='Seconds one nova or placement request may take before '
                     'it fails (connect and each read). A cycle whose request '
                     'timed out observes nothing and acts on nothing; see '
                     'also [loadbalancer] cycle_timeout.')
    return opts


#: keystoneauth's request-retry options, as nova's [placement] section has
#: them, with nova-drs's defaults: a 503 (a nova-api or placement behind a
#: load balancer with no backend for a moment) is asked again before the
#: cycle gives up on its view; a request that timed out or found no one
#: listening is not (a retry would cost another [drs_auth] timeout, and the
#: next cycle asks again anyway). Older openstacksdk releases retry a
#: connection failure once by default: 0 here holds on every release.
RETRY_DEFAULTS = {'connect_retries': 0, 'status_code_retries': 2}
RETRY_OPTIONS = ('connect_retries', 'connect_retry_delay', 'status_code_retries',
                 'status_code_retry_delay', 'retriable_status_codes')


def retry_opts():
    """keystoneauth's options of RETRY_OPTIONS with RETRY_DEFAULTS; the status
    codes typed as HTTP codes, so a bad one fails at startup in one line."""
    opts = [opt for opt in ks_loading.get_adapter_conf_options() if opt.dest in RETRY_OPTIONS]
    for index, opt in enumerate(opts):
        opt.default = RETRY_DEFAULTS.get(opt.dest, opt.default)
        if opt.dest == 'retriable_status_codes':
            opts[index] = cfg.ListOpt(opt.name, help=opt.help,
                                      item_type=cfg.types.Integer(min=100, max=599))
    return opts


def register_opts(conf):
    conf.register_group(loadbalancer_group)
    conf.register_opts(daemon_opts, group=loadbalancer_group)
    conf.register_group(auth_group)
    conf.register_opts(endpoint_opts, group=auth_group)
    conf.register_opts(session_opts(), group=auth_group)
    conf.register_opts(retry_opts(), group=auth_group)
    ks_loading.register_auth_conf_options(conf, auth_group.name)


def list_opts():
    auth_opts = (session_opts() + retry_opts()
                 + ks_loading.get_auth_common_conf_options()
                 + ks_loading.get_auth_plugin_conf_options('password'))
    return [(loadbalancer_group, daemon_opts), (auth_group, endpoint_opts + auth_opts)]
