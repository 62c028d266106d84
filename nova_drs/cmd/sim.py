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

"""``nova-drs-sim``: replay PlanetLab traces, or the cloud's own history
(``--from-stats``), through the decision core."""

import argparse
import os
import sys

from nova_drs import exception
from nova_drs.cmd import sim_stats as stats_replay_cli
from nova_drs.loadbalancer import catalog
from nova_drs.sim import datacenter
from nova_drs.sim import engine
from nova_drs.sim import report
from nova_drs.sim import sweep
from nova_drs.sim import traces

PROG = 'nova-drs-sim'


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG, description='Replay a day of VM CPU traces (CloudSim PlanetLab format) '
                               'through nova-drs decision policies and report CloudSim metrics.')
    parser.add_argument('traces', nargs='?',
                        help='directory with one trace file per VM (not with --from-stats)')
    stats_replay_cli.add_arguments(parser)
    parser.add_argument('--policy', action='append', dest='policies',
                        help='policy name, repeatable: drs (default), dvfs, or '
                             '<thr|iqr|mad|lr|lrr>_<mmt|mc|rs|mu>_<param> e.g. lr_mmt_1.2')
    parser.add_argument('--hosts', type=int, default=datacenter.DEFAULT_HOSTS,
                        help='number of hosts (default %(default)s)')
    parser.add_argument('--host-model', default='cloudsim',
                        choices=sorted(datacenter.HOST_MODELS),
                        help='cloudsim alternates HP ML110 G4/G5; g4 or g5 uses one model')
    parser.add_argument('--samples', type=int, default=288,
                        help='samples per trace file (default %(default)s)')
    parser.add_argument('--seed', type=int, default=0, help='seed for random VM selection')
    parser.add_argument('--sweep', action='append', default=[], metavar='NAME=V1,V2',
                        help='drs parameter values to sweep, repeatable (cartesian product)')
    parser.add_argument('--keep-idle-vms', action='store_true',
                        help='do not retire VMs whose demand drops to zero (CloudSim does)')
    parser.add_argument('--ping-pong-window', type=float, default=3600.0, metavar='SECONDS',
                        help='a server migrated back to a host it left at most this long '
                             'before counts as one ping-pong (default %(default)s)')
    parser.add_argument('--closed-loop', action='store_true',
                        help='also run the shipped nova-loadbalancer cycle against the '
                             'cloud twin (virtual time) and report it beside the core; '
                             'uses every (files x hosts / 800)-th VM so the host density '
                             'of CloudSim\'s 800-host centre holds (doc/source/twin.md)')
    parser.add_argument('--faults', type=int, metavar='SEED',
                        help='with --closed-loop: inject the seeded fault mix (nova 5xx '
                             'and hangs, failed and stalled migrations, hosts that do not '
                             'wake, BMCs that do not answer, a compute without a resource '
                             'provider, a leader takeover, late and skewed statistics)')
    parser.add_argument('--stats-delay', type=float, metavar='SECONDS',
                        help='with --closed-loop: statistics reach the store this late '
                             '(default 0, 60 with --faults)')
    parser.add_argument('--stats-skew', type=float, metavar='SECONDS',
                        help='with --closed-loop: each host\'s clock is off by up to this '
                             'much, either way (default 0, 30 with --faults)')
    parser.add_argument('--warm-up', type=int, metavar='HOURS',
                        help='with --closed-loop: the daemon runs this many virtual hours '
                             'on the day\'s first sample before the metered day, as in a '
                             'cloud where it already ran (default 0: it meets the initial '
                             'placement at midnight)')
    parser.add_argument('--json', help='write all metrics and series to this file')
    parser.add_argument('--report', help='directory for index.html, PNG plots and JSON')
    parser.add_argument('--no-progress', action='store_true',
                        help='no progress bar (it is shown only when stderr is a terminal)')
    return parser


def progress_bar(prefix):
    def show(done, total):
        width = 30
        filled = width * done // total
        sys.stderr.write('\r%s [%s%s] %d/%d' % (prefix, '#' * filled, '.' * (width - filled),
                                               done, total))
        if done == total:
            sys.stderr.write('\n')
        sys.stderr.flush()
    return show


def run(args):
    if args.ping_pong_window < 0:
        raise ValueError('--ping-pong-window must be 0 or more seconds')
    if args.from_stats is not None:
        return stats_replay_cli.run(args, print_results)
    names, data = traces.load_directory(args.traces, args.samples)
    policies = args.policies or ['drs']
    twin_loop = None
    if args.closed_loop:
        # The twin runs the daemon, whose libraries import eventlet; the
        # core-only simulator stays free of it (import only when asked).
        from nova_drs.sim.twin import loop as twin_loop
        names, data = twin_loop.subset(names, data, args.hosts)
    results = []
    for name in policies:
        for params in sweep.parse(args.sweep) if name in catalog.PARAMETRISED else [None]:
            simulation = engine.Simulation(names, data, name, hosts=args.hosts,
                                           host_model=args.host_model, seed=args.seed,
                                           retire_idle=not args.keep_idle_vms, params=params,
                                           ping_pong_window=args.ping_pong_window)
            show = None if args.no_progress or not sys.stderr.isatty() else progress_bar(name)
            result = simulation.run(progress=show)
            result['params'] = params
            result['interval'] = datacenter.INTERVAL
            if twin_loop is not None:
                result['closed_loop'] = twin_loop.ClosedLoop(
                    names, data, hosts=args.hosts, host_model=args.host_model,
                    seed=args.seed, faults_seed=args.faults,
                    stats_delay=args.stats_delay, stats_skew=args.stats_skew,
                    retire_idle=not args.keep_idle_vms,
                    ping_pong_window=args.ping_pong_window,
                    warm_up_hours=args.warm_up or 0).run(progress=show)
            results.append(result)
    return print_results(args, results)


def side_by_side(results):
    """Per policy its core-only row, then its closed-loop row (when there is one)."""
    rows = []
    for result in results:
        if 'closed_loop' not in result:
            rows.append(result)
            continue
        core = {k: v for k, v in result.items() if k != 'closed_loop'}
        rows.append(dict(core, policy=report.label(result) + ' core only', params=None))
        rows.append(dict(result['closed_loop'], policy=report.label(result) + ' closed loop',
                         interval=result['interval']))
    return rows


def closed_loop_lines(results):
    """Invariant, fault and latency counts of each closed loop."""
    lines = []
    for result in results:
        loop = result.get('closed_loop')
        if loop is None:
            continue
        if loop.get('warm_up_hours'):
            lines.append('%s closed loop: metered after a %g-hour warm-up on the first '
                         'sample' % (report.label(result), loop['warm_up_hours']))
        lines.append('%s closed loop: %d invariant violations %s, faults %s, %d failed '
                     'migrations, %d sleeps under an hour (the core: %d), %.0f overloaded '
                     'host-minutes, %.2f kWh drawn by empty hosts not yet down, %d cycles '
                     '(%d failed)' % (
                         report.label(result), loop['invariant_violations'],
                         loop['violations'], loop['faults'], loop['failed_migrations'],
                         loop['sleeps_under_an_hour'], result['sleeps_under_an_hour'],
                         loop['overloaded_host_minutes'], loop['idle_on_kwh'],
                         loop['cycles'], loop['cycle_errors']))
        steady = (loop.get('cycle_cost') or {}).get('steady')
        if steady:
            lines.append('%s closed loop steady cycle: %.3f s wall, %d requests, %d SQL '
                         'statements; the core decided in %.3f s of it (%.1fx)' % (
                             report.label(result), steady['wall_seconds'], steady['requests'],
                             steady['statements'], steady['decision_seconds'],
                             steady['wall_seconds'] / max(steady['decision_seconds'], 1e-9)))
    return lines


def print_results(args, results):
    """The per-policy table (core and closed loop side by side), and the JSON
    and HTML report when asked."""
    rows = side_by_side(results)
    print(report.table(rows))
    for line in closed_loop_lines(results):
        print(line)
    if args.json:
        report.write_json(results, args.json)
    if args.report:
        note = report.write_report(rows, args.report)
        if note:
            print(note)
        print('report: %s/index.html' % args.report.rstrip('/'))
    return 0


def _check_outputs(args):
    """Output paths usable before an hour-long run, not after it."""
    if args.report:
        try:
            os.makedirs(args.report, exist_ok=True)
        except OSError as exc:
            raise ValueError('--report %s: %s' % (args.report, exc.strerror)) from None
        if not os.access(args.report, os.W_OK):
            raise ValueError('--report %s: directory is not writable' % args.report)
    if args.json and os.path.isdir(args.json):
        raise ValueError('--json %s is a directory' % args.json)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.samples < 1:
        parser.error('--samples must be at least 1')
    stats_replay_cli.check_usage(parser, args)
    if args.faults is not None and not args.closed_loop:
        parser.error('--faults needs --closed-loop')
    for flag, value in (('--stats-delay', args.stats_delay), ('--stats-skew', args.stats_skew)):
        if value is not None and not args.closed_loop:
            parser.error('%s needs --closed-loop' % flag)
        if value is not None and not 0 <= value < 3600:
            parser.error('%s must be at least 0 and under 3600 seconds' % flag)
    if args.warm_up is not None and not (args.closed_loop and 0 <= args.warm_up <= 48):
        parser.error('--warm-up needs --closed-loop and 0 to 48 hours')
    if args.closed_loop and (args.from_stats is not None or args.sweep
                             or (args.policies or ['drs']) != ['drs']):
        parser.error('--closed-loop runs the drs policy on traces only '
                     '(no --from-stats, --sweep or other policies)')
    try:
        _check_outputs(args)
        return run(args)
    except exception.SetupError as exc:
        sys.stderr.write('%s: %s\n' % (PROG, exc))
        return 1
    except (exception.TraceError, exception.SimulationError, ValueError, OSError) as exc:
        sys.stderr.write('%s: error: %s\n' % (PROG, exc))
        return 2


if __name__ == '__main__':
    sys.exit(main())
