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

"""The CPU history the daemon holds between cycles, topped up from the
statistics store with only what is new."""

import datetime

from nova_drs.db import statistics as db_statistics

#: Statistics are re-read from this much before the newest sample already
#: held, for samples stored late; older late ones wait for the full refresh.
STATS_OVERLAP = datetime.timedelta(seconds=30)


def read_statistics(database, history):
    """Top ``history`` up with the samples stored since it was last read."""
    host_rows = db_statistics.host_cpu_since(database, history.since())
    after, late = history.unseen(host_rows)
    history.add(host_rows, db_statistics.instance_cpu_since(database, after, late))


class History:
    """The newest ``length`` CPU samples per host and instance, kept between cycles
    and topped up with what is new (cleared and re-read on every full refresh).
    A sample is (sampled_at, CPU demand as a fraction of the capacity).

    Host samples are re-read with an overlap (late ones); instance samples
    only after the newest host sample held, plus those of late host samples.
    """

    def __init__(self, length):
        self.length = length
        self.hosts, self.instances, self.cpu = {}, {}, {}
        self.newest = self.newest_host = None
        self._start = None

    def clear(self, start):
        self.hosts, self.instances, self.cpu = {}, {}, {}
        self.newest = self.newest_host = None
        self._start = start

    @property
    def start(self):
        """Samples taken at or before this were not read (the last full refresh)."""
        return self._start

    def since(self):
        if self.newest is None:
            return self._start
        return max(self._start, self.newest - STATS_OVERLAP)

    def unseen(self, host_rows):
        """(after, late): read instance samples taken after ``after`` and those of
        the ``late`` (host, sampled_at) samples, taken before but not held yet."""
        after = self.newest_host
        if after is None:
            return self.since(), ()
        late = {(host, when) for host, when, _cpu in host_rows if when <= after and
                all(held != when for held, _ in self.hosts.get(host, ()))}
        return after, late

    def add(self, host_rows, instance_rows):
        for rows, held in ((host_rows, self.hosts), (instance_rows, self.instances)):
            changed, newest = set(), None
            for key, sampled_at, cpu in rows:
                samples = held.get(key, ())
                sample = (sampled_at, min(1.0, (cpu or 0.0) / 100.0))
                if not samples or sampled_at > samples[0][0]:
                    held[key] = (sample,) + samples[:self.length - 1]
                elif any(when == sampled_at for when, _ in samples):
                    continue
                else:
                    held[key] = tuple(sorted(samples + (sample,), reverse=True))[
                        :self.length]
                changed.add(key)
                newest = sampled_at if newest is None else max(newest, sampled_at)
            for key in changed:
                self.cpu[key] = tuple(fraction for _when, fraction in reversed(held[key]))
            if newest is not None:
                self.newest = newest if self.newest is None else max(self.newest, newest)
                if held is self.hosts:
                    self.newest_host = max(self.newest_host or newest, newest)
