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

"""``nova-drs-manage stats purge``: delete samples past the retention."""

import datetime

from oslo_utils import timeutils

from nova_drs.cmd import subcommands
from nova_drs.db import api
from nova_drs.db import statistics as db_statistics


def _purge(conf):
    seconds = conf.category.older_than
    if seconds is None:
        seconds = conf.drs_stats.retention
    if seconds < 0:
        raise ValueError('--older-than must be 0 or more seconds, got %d' % seconds)
    before = timeutils.utcnow() - datetime.timedelta(seconds=seconds)
    hosts, instances = db_statistics.purge(api.Database.from_conf(conf), before)
    print('purged %d host and %d instance samples taken before %s'
          % (hosts, instances, before.isoformat(timespec='seconds')))
    return 0


def add_parsers(subparsers):
    parsers = subcommands.category(subparsers, 'stats', 'host and instance statistics', {
        'purge': (_purge, 'delete samples older than the retention')})
    parsers['purge'].add_argument('--older-than', type=int, default=None, metavar='SECONDS',
                                  help='age limit in seconds (default: [drs_stats] retention)')
