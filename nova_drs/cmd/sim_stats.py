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

"""``nova-drs-sim --from-stats``: what-if replay of the cloud's own history.

Reads the DRS database (``--config-file`` nova.conf with ``[drs_database]``,
or ``--connection URL``) or a dataset written by ``--export``; first checks
that each recorded cycle's rebuilt snapshot gives the plan the daemon made,
then simulates the period through every ``--policy``.
"""

import sys

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs import loadbalancer_plugins
from nova_drs.conf import startup
from nova_drs.daemon import planning
from nova_drs.db import api
from nova_drs.db import cycle_inventory
from nova_drs.loadbalancer import catalog
from nova_drs.observability import energy
from nova_drs.sim import snapshot_file
from nova_drs.sim import stats_replay
from nova_drs.sim import sweep

PROG = 'nova-drs-sim'


MB = 1024 * 1024


def add_arguments(parser):
    group = parser.add_argument_group('what-if replay of the cloud\'s own history')
    group.add_argument('--from-stats', nargs='?', const='', metavar='FILE',
                       help='replay the statistics and cycles the DRS database recorded, '
                            'or a dataset FILE written by --export (.json or .json.gz)')
    group.add_argument('--import', dest='import_file', metavar='FILE',
                       help='same as --from-stats FILE')
    group.add_argument('--import-limit', type=int, metavar='MB',
                       default=snapshot_file.MAX_BYTES // MB,
                       help='largest dataset FILE read, in MiB of JSON once '
                            'decompressed (default %(default)s); a larger one is '
                            'refused before it fills the memory')
    group.add_argument('--since', default='7d',
                       help='period replayed from the database: 7d, 12h, 30m or an ISO '
                            '8601 UTC time (default %(default)s)')
    group.add_argument('--config-file', action='append', default=[], metavar='PATH',
                       help='nova.conf with [drs_database] and the [loadbalancer] options '
                            'the daemon ran with, repeatable')
    group.add_argument('--connection', metavar='URL',
                       help='DRS database URL (instead of [drs_database] connection)')
    group.add_argument('--export', metavar='FILE',
                       help='write the replayed period as an anonymised dataset '
                            '(gzip-compressed when FILE ends in .gz)')


def check_usage(parser, args):
    if args.import_limit < 1:
        parser.error('--import-limit must be at least 1 (MiB)')
    if args.import_file:
        if args.from_stats:
            parser.error('--import and --from-stats FILE name two datasets; give one')
        args.from_stats = args.import_file
    if args.from_stats is None:
        if not args.traces:
            parser.error('a trace directory or --from-stats is required')
        for option in ('config_file', 'connection', 'export'):
            if getattr(args, option):
                parser.error('--%s needs --from-stats' % option.replace('_', '-'))
        return
    if args.traces:
        parser.error('give a trace directory or --from-stats, not both')
    try:
        args.since_time = energy.parse_since(args.since, timeutils.utcnow())
    except ValueError as exc:
        parser.error('--since: %s' % exc)


def _configure(args):
    """CONF from --config-file (defaults otherwise); ConfigError is one line."""
    argv = [part for path in args.config_file for part in ('--config-file', path)]
    conf = drs_conf.CONF
    try:
        startup.parse(conf, argv, PROG)
        startup.validate(conf)
        policy = loadbalancer_plugins.load_policy(conf)
    except exception.ConfigError as exc:
        raise exception.SetupError(exc) from None
    return conf, policy


def _dataset(args, conf):
    if args.from_stats:
        return snapshot_file.read(args.from_stats, limit=args.import_limit * MB)
    connection = args.connection or api.connection_from_conf(conf)
    try:
        database = api.Database(connection)
        with database.reader() as session:
            session.execute(sa.text('SELECT 1'))
    except Exception as exc:
        raise exception.SetupError('DRS database %s: %s' % (api.masked(connection),
                                                            api.reason(exc))) from None
    try:
        return stats_replay.load(database, args.since_time)
    except exception.NoData:
        raise
    except Exception as exc:  # e.g. a database never synced to this schema
        raise exception.SetupError('DRS database %s: %s (nova-drs-manage db sync?)'
                                   % (api.masked(connection), api.reason(exc))) from None


def run(args, print_results):
    conf, daemon_policy = _configure(args)
    try:
        return _replay(args, conf, daemon_policy, print_results)
    except exception.NoData as exc:
        raise exception.SetupError(exc) from None
    finally:
        conf.reset()


def _replay(args, conf, daemon_policy, print_results):
    policies = args.policies or ['drs']
    for name in policies:
        if name != 'dvfs':
            loadbalancer_plugins.by_name(name)  # an unknown name fails before any reading
    dataset = _dataset(args, conf)
    if args.export:
        snapshot_file.write(snapshot_file.anonymise(dataset), args.export)
        print('exported %d cycles to %s' % (len(dataset['cycles']), args.export))
    print(_reproduced(dataset, planning.ClusterPlanner(conf, daemon_policy)))
    results = []
    for name in policies:
        for params in sweep.parse(args.sweep) if name in catalog.PARAMETRISED else [None]:
            results.append(_simulate(dataset, name, params, args, conf))
    return print_results(args, results)


def _simulate(dataset, name, params, args, conf):
    simulation = stats_replay.StatsSimulation(
        dataset, name, conf.loadbalancer.default_policy, conf.drs_energy.power_curve,
        params=params, seed=args.seed, ping_pong_window=args.ping_pong_window)
    result = simulation.run()
    result.update(params=params, interval=simulation.interval)
    return result


def _reproduced(dataset, planner):
    """One line: how many recorded cycles the replay plans exactly as the daemon did."""
    outcomes = stats_replay.reproduce(dataset, planner)
    same = sum(1 for _now, daemon, replay in outcomes
               if sorted(map(repr, cycle_inventory.plan_key(daemon)))
               == sorted(map(repr, cycle_inventory.plan_key(replay))))
    actions = sum(len(daemon) for _now, daemon, _replay in outcomes)
    line = ('%d cycles recorded (%d planned actions); the replay plans %d of them exactly '
            'as the daemon did' % (len(outcomes), actions, same))
    if same != len(outcomes):
        sys.stderr.write('%s: warning: %d cycles planned differently (options other than '
                         'the daemon\'s? pass its nova.conf with --config-file)\n'
                         % (PROG, len(outcomes) - same))
    return line
