#!/usr/bin/env python3
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

"""Run a test tier's files in parallel pytest processes, one file at a time.

Why not pytest-xdist: nova's functional fixtures monkey-patch eventlet, and
an xdist worker's execnet channel then never comes up ("bringing up
nodes..." forever). nova's own gate runs stestr workers, separate processes;
this does the same with pytest: ``--jobs`` workers take the next test file
from one queue (the largest first, so no long file starts last), each file
in its own ``python -m pytest`` process. The tests already isolate: each
makes its own database and state directory.

``--preload MODULE`` (repeatable): each job keeps a process that has
imported the modules once (nova's, for the functional tier: ~5 s of CPU a
file) and forks every file's pytest process from it, as a fresh process that
imported them would be; nothing else runs in it before the fork.

One line per file as it ends, with its wall and CPU seconds (the tier is
CPU-bound on small machines: CPU says what a file costs the others); a
failing file's output without the INFO, DEBUG and WARNING lines nova's
fixtures capture into every failure (its whole output goes to
state/test-shards/, named after the file); a summary with the slowest files.
Exit status 1 if any file failed, 2 on bad arguments.

Usage: tools/test-shards.py [--jobs N] [--preload MODULE]... PATH... [-- PYTEST_ARGS...]
"""

import argparse
import importlib
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback

#: pytest, then the process ends without the interpreter's finalization:
#: pytest has returned, its output is flushed and its status known, and
#: tearing down nova's modules and objects costs ~2 s of CPU per file.
_PYTEST_THEN_EXIT = ('import os, sys, pytest; status = pytest.console_main(); '
                     'sys.stdout.flush(); sys.stderr.flush(); os._exit(status)')
PYTEST_OPTIONS = ['-p', 'no:cacheprovider', '-p', 'no:warnings', '-q']
PYTEST = [sys.executable, '-c', _PYTEST_THEN_EXIT] + PYTEST_OPTIONS


def test_files(paths):
    """Every test_*.py under the paths (or the files named), largest first."""
    found = []
    for path in paths:
        if os.path.isfile(path):
            found.append(path)
            continue
        if not os.path.isdir(path):
            raise SystemExit('test-shards: no such file or directory: %s' % path)
        for root, _dirs, files in os.walk(path):
            found += [os.path.join(root, name) for name in files
                      if name.startswith('test_') and name.endswith('.py')]
    return sorted(found, key=lambda name: (-os.path.getsize(name), name))


FULL_OUTPUT_DIR = os.path.join('state', 'test-shards')
#: A log line nova's StandardLogging fixture captured (testtools detail).
_QUIET_LOG_LINE = re.compile(r'^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING) ')


def _failure_report(name, output):
    """The failing file's output with its captured chatter left out, and where the rest is."""
    os.makedirs(FULL_OUTPUT_DIR, exist_ok=True)
    path = os.path.join(FULL_OUTPUT_DIR, name.replace(os.sep, '.') + '.log')
    with open(path, 'w') as full:
        full.write(output)
    kept = [line for line in output.splitlines() if not _QUIET_LOG_LINE.match(line)]
    dropped = len(output.splitlines()) - len(kept)
    return '%s\n(%d captured DEBUG/INFO/WARNING log lines left out; whole output: %s)' % (
        '\n'.join(kept), dropped, path)


def _summary_line(output):
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1].strip('= ') if lines else '(no output)'


def _run_file(pytest_args, name, zygote=None):
    """(exit status, CPU seconds of the pytest process and its children, output).

    The output goes to a file, not a pipe, so the process can be reaped with
    os.wait4, which alone tells this file's CPU apart from the other jobs'.
    """
    with tempfile.NamedTemporaryFile('w+') as out:
        if zygote is not None:
            returncode, cpu = zygote.run(pytest_args + [name], out.name)
        else:
            proc = subprocess.Popen(PYTEST + pytest_args + [name], stdout=out,
                                    stderr=subprocess.STDOUT, text=True)
            _pid, status, usage = os.wait4(proc.pid, 0)
            # Reaped here: Popen must not wait for it again.
            proc.returncode = returncode = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
        out.seek(0)
        return returncode, cpu, out.read()


class Zygote:
    """A process that imported ``modules`` and forks one pytest process per file."""

    def __init__(self, modules):
        self.modules = modules
        self.forked_cpu = 0.0
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), '--zygote'] + list(modules),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)

    def wait_ready(self):
        ready = json.loads(self.proc.stdout.readline() or '{"error": "exited"}')
        if 'error' in ready:
            raise SystemExit('test-shards: --preload %s failed: %s'
                             % (' '.join(self.modules), ready['error']))

    def run(self, argv, output_path):
        """(exit status, CPU seconds) of pytest ``argv`` forked, its output in the file."""
        self.proc.stdin.write(json.dumps({'argv': argv, 'output': output_path}) + '\n')
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline() or '{"status": 1, "cpu": 0}')
        self.forked_cpu += answer['cpu']
        return answer['status'], answer['cpu']

    def close(self):
        """CPU seconds the zygote spent itself (preloading), not its files'."""
        self.proc.stdin.close()
        _pid, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        # wait4 counts the children the zygote reaped: its files.
        return max(0.0, usage.ru_utime + usage.ru_stime - self.forked_cpu)


def zygote_main(modules):
    """The zygote's loop: requests on stdin, one JSON line per forked file on stdout.

    The OS calls are taken before the imports: eventlet (nova's functional
    tests patch it in) would make them green. The child runs pytest as
    ``python -m pytest`` would (the current directory first on sys.path),
    its output to the request's file, and ends without finalization.
    """
    read_line, write, fork, wait4, dup2 = sys.stdin.readline, os.write, os.fork, os.wait4, os.dup2
    answers = os.dup(1)
    sys.path[0] = ''
    try:
        for module in modules:
            importlib.import_module(module)
        import pytest
    except BaseException as exc:  # reported to test-shards, which stops
        error = '%s: %s' % (type(exc).__name__, exc)
        write(answers, (json.dumps({'error': error}) + '\n').encode())
        return 1
    write(answers, b'{"ready": true}\n')
    for line in iter(read_line, ''):
        request = json.loads(line)
        pid = fork()
        if pid == 0:
            output = os.open(request['output'], os.O_WRONLY | os.O_TRUNC)
            dup2(output, 1)
            dup2(output, 2)
            dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the requests stay the zygote's
            os.close(answers)
            sys.argv = ['pytest'] + PYTEST_OPTIONS + request['argv']
            status = 1
            try:
                status = pytest.console_main()
            except BaseException:  # the child never returns into the loop
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        _pid, status, usage = wait4(pid, 0)
        write(answers, (json.dumps({'status': os.waitstatus_to_exitcode(status),
                                    'cpu': usage.ru_utime + usage.ru_stime}) + '\n').encode())
    return 0


def run(files, jobs, pytest_args, preload=()):
    pending = queue.Queue()
    for name in files:
        pending.put(name)
    results = []
    lock = threading.Lock()

    def work(zygote):
        while True:
            try:
                name = pending.get_nowait()
            except queue.Empty:
                return
            start = time.monotonic()
            returncode, cpu, output = _run_file(pytest_args, name, zygote)
            elapsed = time.monotonic() - start
            # pytest exit 5: every test of the file was deselected.
            failed = returncode not in (0, 5)
            with lock:
                results.append((name, elapsed, failed, cpu))
                print('%s %-60s %6.1f s  %6.1f s CPU  %s' % (
                    'FAIL' if failed else 'ok  ', name, elapsed, cpu, _summary_line(output)),
                    flush=True)
                if failed:
                    print(_failure_report(name, output), flush=True)

    # Started here, not in the threads: a preload that fails stops the run.
    zygotes = [Zygote(preload) for _ in range(jobs)] if preload else []
    for zygote in zygotes:
        zygote.wait_ready()
    threads = [threading.Thread(target=work, args=(zygote,))
               for zygote in zygotes or [None] * jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    preload_cpu = sum(zygote.close() for zygote in zygotes)
    return results, preload_cpu


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--jobs', '-j', type=int, default=os.cpu_count() or 1)
    parser.add_argument('--preload', action='append', default=[], metavar='MODULE')
    parser.add_argument('paths', nargs='+')
    cut = argv.index('--') if '--' in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    pytest_args = argv[cut + 1:]
    if args.jobs < 1:
        parser.error('--jobs must be at least 1')
    start = time.monotonic()
    results, preload_cpu = run(test_files(args.paths), args.jobs, pytest_args, args.preload)
    failed = [name for name, _, bad, _ in results if bad]
    slowest = sorted(results, key=lambda result: -result[1])[:5]
    print('test-shards: %d files, %d failed, %.1f s with %d jobs, %.0f s CPU%s; slowest: %s' % (
        len(results), len(failed), time.monotonic() - start, args.jobs,
        sum(cpu for _, _, _, cpu in results) + preload_cpu,
        ' (%.0f s of it preloading)' % preload_cpu if args.preload else '',
        ', '.join('%s %.0f s (%.0f s CPU)' % (os.path.basename(name), seconds, cpu)
                  for name, seconds, _, cpu in slowest)))
    for name in failed:
        print('test-shards: FAILED %s' % name)
    return 1 if failed else 0


if __name__ == '__main__':
    if sys.argv[1:2] == ['--zygote']:
        sys.exit(zygote_main(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
