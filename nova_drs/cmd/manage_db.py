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

"""``nova-drs-manage db sync|version|purge``."""

import datetime

from oslo_utils import timeutils

from nova_drs.cmd import manage_power
from nova_drs.cmd import subcommands
from nova_drs.daemon import history_purge
from nova_drs.db import api
from nova_drs.db import migration
from nova_drs.power import sealing


def _sync(conf):
    sealer = sealing.sealer_from_conf(conf)  # a bad key file fails before any change
    database = api.Database.from_conf(conf)
    try:
        before = migration.current_revision(database)
        migration.sync(database, conf.category.revision)
        after = migration.current_revision(database)
        clear = _seal_legacy(sealer, database)
    finally:
        database.dispose()  # the pool closes now (callers may drop the database)
    if before == after:
        print('DRS database %s is up to date (revision %s)'
              % (api.masked(database.connection), after))
    else:
        print('DRS database %s upgraded from %s to %s'
              % (api.masked(database.connection), before or 'empty', after))
    if clear:
        print('WARNING: %d host(s) hold power secrets in clear (first: %s); set [drs_power] '
              'seal_public_key_file and run "nova-drs-manage power seal"'
              % (len(clear), min(clear)))
    return 0


def _seal_legacy(sealer, database):
    """Seal the secrets rows from before sealing hold in clear, with ``sealer`` if a
    public key is set; the hosts still holding clear secrets."""
    sealed, clear = manage_power.seal_stored(database, sealer)
    if sealed:
        print('sealed the power secrets of %d host(s) for key %s' % (sealed, sealer.key_id))
    return clear


def _version(conf):
    database = api.Database.from_conf(conf)
    print('current: %s\nhead: %s' % (migration.current_revision(database) or 'none',
                                     migration.head_revision()))
    return 0


def _purge(conf):
    """Delete (or, --dry-run, count) the history past each table's retention."""
    dry_run = conf.category.purge_dry_run
    names = conf.category.table or None
    database = api.Database.from_conf(conf)
    now = timeutils.utcnow()
    outcome = history_purge.purge(database, conf, now, dry_run=dry_run, names=names)
    verb = 'would delete' if dry_run else 'deleted'
    for name, (rows, _done) in outcome.items():
        print('%s: %s %d rows' % (name, verb, rows))
    hours = conf.loadbalancer.plan_retention
    if hours and (names is None or history_purge.PLANS in names):
        print('%s: %s %d finished plans' % (history_purge.PLANS, verb, history_purge.purge_plans(
            database, now - datetime.timedelta(hours=hours), dry_run)))
    return 0


def add_parsers(subparsers):
    parsers = subcommands.category(subparsers, 'db', 'DRS database schema', {
        'sync': (_sync, 'create or upgrade the schema'),
        'version': (_version, 'show current and head revision'),
        'purge': (_purge, 'delete history older than its retention ([drs_retention], '
                          '[loadbalancer] decision_retention and plan_retention, '
                          '[drs_energy] reading_retention, [drs_stats] retention for '
                          'cycle inventories; samples: "stats purge")')})
    parsers['sync'].add_argument('revision', nargs='?', default='heads')
    # A dest of its own: nova-loadbalancer's --dry-run is a top-level
    # option named dry_run wherever both commands' options are registered.
    parsers['purge'].add_argument('--dry-run', action='store_true', dest='purge_dry_run',
                                  help='count the rows that would be deleted, delete none')
    tables = sorted(list(history_purge.BY_NAME) + [history_purge.PLANS])
    parsers['purge'].add_argument('--table', action='append', metavar='TABLE', choices=tables,
                                  help='only this table (repeatable; default: all of %s)'
                                       % ', '.join(tables))
