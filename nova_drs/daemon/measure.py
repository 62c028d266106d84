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

"""Power drawn as the hosts' BMCs measure it: a bounded batch each cycle.

At most ``[drs_energy] power_readings_per_cycle`` active hosts whose driver
measures (redfish, ipmi) are read, the least recently read first, by
``WORKERS`` threads within ``[drs_power] timeout`` seconds in all: a slow or
silent BMC delays nothing but its own reading, which is retried first next
cycle. Readings feed the energy report and the power metrics; a failed one
is logged and never costs the cycle.
"""

import concurrent.futures
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_drs.db import hosts as drs_hosts
from nova_drs.db import power_readings
from nova_drs.power import loader

LOG = logging.getLogger(__name__)
WORKERS = 8
_NEVER = datetime.datetime.min


def due(records, last_tried, limit):
    """The ``limit`` records tried least recently (never tried first), by host name."""
    ordered = sorted(records, key=lambda r: (last_tried.get(r['host'], _NEVER), r['host']))
    return ordered[:limit]


class PowerMeter:
    """Reads a batch of BMCs per cycle; remembers whom it tried, read or not.

    A BMC that does not answer waits its turn like the others instead of
    taking a slot every cycle. A BMC that answers without a figure (no
    Redfish Power resource, no DCMI) is not asked again until the host's
    power settings change or the daemon restarts: no session is opened with
    it for nothing each cycle. After a restart the stored readings say who
    was read last.
    """

    def __init__(self, conf, database, drivers):
        self.conf = conf
        self.db = database
        self.drivers = drivers
        self.last_tried = None
        self.no_figure = {}  # host -> the power settings its BMC had no figure with
        self.measuring = None  # driver names, looked up once (entry points)

    def read(self, now=None):
        """Read, store and prune; returns {host: watts} read this cycle."""
        limit = self.conf.drs_energy.power_readings_per_cycle
        if self.measuring is None:
            self.measuring = loader.measuring()
        names = self.measuring if limit else ()
        if not names:
            return {}
        records = [r for r in drs_hosts.list_with_power(self.db, active_with=names)
                   if self.no_figure.get(r['host']) != _settings(r)]
        if not records:
            return {}
        if self.last_tried is None:
            self.last_tried = {host: read_at for host, (read_at, _) in
                               power_readings.newest(self.db).items()}
        now = now or timeutils.utcnow()
        batch = due(records, self.last_tried, limit)
        self.last_tried.update((record['host'], now) for record in batch)
        watts, no_figure = _read_all(self.drivers, batch, self.conf.drs_power.timeout)
        for record in batch:
            if record['host'] in no_figure:
                LOG.info('%s: its BMC reports no power drawn; modelled until its power '
                         'settings change or nova-loadbalancer restarts', record['host'])
                self.no_figure[record['host']] = _settings(record)
        power_readings.save(self.db, now, watts)
        power_readings.prune(self.db, now, self.conf.drs_energy.reading_retention)
        return watts


def _settings(record):
    return repr(record.get('power_settings'))


def _read_all(drivers, records, budget):
    """({host: watts}, {hosts whose BMC answered without a figure}) within ``budget`` s."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS,
                                                 thread_name_prefix='power-reading')
    futures = {pool.submit(_read_one, drivers, record): record['host'] for record in records}
    done, late = concurrent.futures.wait(futures, timeout=budget)
    pool.shutdown(wait=False, cancel_futures=True)
    if late:
        LOG.warning('power readings: %d BMC(s) did not answer within %s s (first: %s); '
                    'read first next cycle', len(late), budget,
                    sorted(futures[f] for f in late)[0])
    readings, no_figure = {}, set()
    for future in done:
        answered, watts = future.result()
        if watts is not None:
            readings[futures[future]] = watts
        elif answered:
            no_figure.add(futures[future])
    return readings, no_figure


def _read_one(drivers, record):
    """(whether the BMC answered, watts or None)."""
    try:
        driver, target = drivers(record)
        return True, driver.power_watts(target)
    except Exception as exc:  # one BMC's failure is its own
        LOG.warning('%s: no power reading: %s', record['host'], exc)
        return False, None
