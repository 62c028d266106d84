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
statistics store with only what is new.

New samples are found by ingest order, the autoincrement id the DRS database
gives each row, never by ``sampled_at``: that is each compute's own clock,
and one compute ahead of the others, or a collector backlog, would hide the
other hosts' samples from a read by time. A backlog of any length is read
once, when it arrives. How old a host's statistics are is measured on the
database server's clock alone: from when the database received its newest
sample (``created_at``, stamped by the server) to the server's time of the
read, so neither a skewed compute nor the daemon's clock judges it.
"""

import bisect
import datetime

from oslo_log import log as logging

from nova_drs.db import statistics as db_statistics

LOG = logging.getLogger(__name__)

#: How long an id skipped by a read is waited for, on the database server's
#: clock. MySQL/MariaDB and PostgreSQL hand out ids at INSERT and commit
#: transactions in any order, so a row may appear below ids already read;
#: other skipped ids never appear (rolled back, duplicates ignored).
INGEST_GRACE = datetime.timedelta(seconds=60)
#: Awaited id ranges past this many are merged into one (rows read again are
#: ignored): a read stays a handful of primary key ranges.
MAX_GAPS = 100


def read_statistics(database, history):
    """Top ``history`` up with the samples the database received since it was
    last read (everything received within its window after a ``clear``)."""
    received = _read(database, history)
    if history.host_ids.went_back(received.top_ids[0]) or \
            history.instance_ids.went_back(received.top_ids[1]):
        LOG.warning('statistics ids went back (tables emptied and ids reused): '
                    'the history is read again in full')
        history.clear(history.window)
        received = _read(database, history)
    history.take(received)


def _read(database, history):
    return db_statistics.read_received(database, history.window,
                                       history.host_ids.position(),
                                       history.instance_ids.position())


def _missing(ids, low, high, noticed):
    """The sub-ranges of [low, high] absent from the sorted ``ids``."""
    expected = low
    for found in ids[bisect.bisect_left(ids, low):bisect.bisect_right(ids, high)]:
        if found > expected:
            yield [expected, found - 1, noticed]
        expected = found + 1
    if expected <= high:
        yield [expected, high, noticed]


class IngestOrder:
    """How far one table was read in ingest order: every id up to ``after``
    except the ``gaps`` [low, high, noticed at] still awaited."""

    def __init__(self):
        self.after = None
        self.gaps = []

    def position(self):
        """None (read everything within the window) or (after, [(low, high)])."""
        if self.after is None:
            return None
        return self.after, [(low, high) for low, high, _noticed in self.gaps]

    def went_back(self, top):
        """Whether the table's highest id is below what was read: emptied
        and its ids given out again (SQLite does so)."""
        return self.after is not None and (top is None or top < self.after)

    def advance(self, ids, now, top):
        """Take the ids of a read (ascending), at the server's time ``now``;
        ``top`` is the table's highest id at that read."""
        awaited = []
        for low, high, noticed in self.gaps:
            if now - noticed <= INGEST_GRACE:
                awaited.extend(_missing(ids, low, high, noticed))
        fresh = ids if self.after is None else ids[bisect.bisect_right(ids, self.after):]
        expected = fresh[0] if self.after is None and fresh else (self.after or 0) + 1
        for found in fresh:
            if found > expected:
                awaited.append([expected, found - 1, now])
            expected = found + 1
        if fresh:
            self.after = fresh[-1]
        elif self.after is None:
            self.after = top
        if len(awaited) > MAX_GAPS:
            awaited = [[min(g[0] for g in awaited), max(g[1] for g in awaited),
                        min(g[2] for g in awaited)]]
        self.gaps = awaited


class History:
    """The newest ``length`` CPU samples per host and instance, kept between cycles
    and topped up with what is new (cleared and re-read on every full refresh).
    A sample is (sampled_at, CPU demand as a fraction of the capacity).
    """

    def __init__(self, length, window=datetime.timedelta(0)):
        self.length = length
        self.clear(window)

    def clear(self, window):
        """Forget everything; the next read takes what was received within
        ``window`` (a timedelta) of the database server's time."""
        self.window = window
        self.hosts, self.instances, self.cpu = {}, {}, {}
        self.received = {}   # host -> when the database received its newest sample
        self.read_at = None  # the database server's time at the last read
        self.newest = self._oldest = None
        self.host_ids, self.instance_ids = IngestOrder(), IngestOrder()

    @property
    def start(self):
        """Samples stamped at or before this were not read (None: none read)."""
        if self._oldest is None:
            return None
        return self._oldest - datetime.timedelta(microseconds=1)

    def ages(self):
        """{host: seconds from when the database received its newest sample to
        the last read}, both on the database server's clock."""
        return {host: (self.read_at - when).total_seconds()
                for host, when in self.received.items()}

    def take(self, received):
        """Add a ``db.statistics.Received``."""
        self.read_at = received.now
        self.host_ids.advance([row[0] for row in received.hosts], received.now,
                              received.top_ids[0])
        self.instance_ids.advance([row[0] for row in received.instances], received.now,
                                  received.top_ids[1])
        for _id, host, _sampled_at, _cpu, received_at in received.hosts:
            if received_at is not None and (host not in self.received or
                                            received_at > self.received[host]):
                self.received[host] = received_at
        self.add([row[1:4] for row in received.hosts],
                 [row[1:4] for row in received.instances])

    def add(self, host_rows, instance_rows):
        """Add (key, sampled_at, cpu percent) rows; a sample already held is skipped."""
        for rows, held in ((host_rows, self.hosts), (instance_rows, self.instances)):
            changed = set()
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
                self.newest = sampled_at if self.newest is None else max(self.newest,
                                                                         sampled_at)
                self._oldest = sampled_at if self._oldest is None else min(self._oldest,
                                                                           sampled_at)
            for key in changed:
                self.cpu[key] = tuple(fraction for _when, fraction in reversed(held[key]))
