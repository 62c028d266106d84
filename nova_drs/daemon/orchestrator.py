"""Act: carry out a plan through nova, within limits, never twice.

* Migrations go through nova without ``force``: nova's scheduler re-validates
  the destination, so affinity rules and our own filters still hold even if
  our snapshot was stale.
* Limits per source, destination and cluster bound the load a cycle puts on
  the cloud; what does not fit waits for the next cycle (re-planned on fresh
  data then).
* Every request is recorded before nova is asked; an instance moved (or that
  failed to move) recently is left alone for ``instance_cooldown``.
* Suspends and wakes only move a host's DRS state (compare-and-swap); the
  host lifecycle does the work over the next cycles.
"""

import collections
import datetime
import logging

from oslo_utils import timeutils
from nova_drs.daemon import nova_api
from nova_drs.db import hosts as drs_hosts
from nova_drs.db import lb_migrations
from nova_drs.loadbalancer import model

LOG = logging.getLogger(__name__)



def action_to_dict(action):
    if isinstance(action, model.Migrate):
        return {'type': 'migrate', 'instance': action.instance, 'source': action.source,
                'destination': action.destination, 'reason': str(action.reason)}
    kind = 'suspend' if isinstance(action, model.Suspend) else 'wake'
    return {'type': kind, 'host': action.host, 'reason': str(action.reason)}


class Orchestrator:

    def __init__(self, nova, database, limits, instance_cooldown, still_leader,
                 clock=timeutils.utcnow):
        self.nova = nova
        self.db = database
        self.limits = limits    # dict: per_host, per_destination, per_cluster
        self.cooldown = datetime.timedelta(seconds=instance_cooldown)
        self.still_leader = still_leader
        self._now = clock

    def execute(self, actions, view):
        """Carry out plan actions (dicts); returns {'started': n, 'skipped': [...]}."""
        hosts = {h.name: h for h in view.snapshot.hosts}
        suspending = {a['host'] for a in actions if a['type'] == 'suspend'}
        busy = self._busy(view)
        started, skipped = 0, []
        for action in actions:
            if not self.still_leader():
                skipped.append((action, 'lost leadership'))
                break
            if action['type'] == 'wake':
                version = drs_hosts.transition(self.db, action['host'], drs_hosts.SUSPENDED,
                                               drs_hosts.WAKING, action['reason'])
                started += version is not None
            elif action['type'] == 'suspend':
                version = drs_hosts.transition(self.db, action['host'], drs_hosts.ACTIVE,
                                               drs_hosts.SUSPENDING, action['reason'])
                started += version is not None
            elif action['source'] in suspending:
                # The host lifecycle empties hosts it suspends itself, letting
                # nova's scheduler (with our filters and weighers) choose.
                continue
            else:
                why = self._refuse(action, view, hosts, busy)
                if why:
                    skipped.append((action, why))
                    continue
                if self._migrate(action, view):
                    started += 1
                    cluster = hosts[action['source']].cluster
                    busy['source'][action['source']] += 1
                    busy['destination'][action['destination']] += 1
                    busy['cluster'][cluster] += 1
        for action, why in skipped:
            LOG.info('not now: %s (%s)', action, why)
        return {'started': started, 'skipped': skipped}

    def _busy(self, view):
        hosts = {h.name: h for h in view.snapshot.hosts}
        busy = {'source': collections.Counter(), 'destination': collections.Counter(),
                'cluster': collections.Counter()}
        for migration in view.snapshot.migrations:
            busy['source'][migration.source] += 1
            busy['destination'][migration.destination] += 1
            busy['cluster'][hosts[migration.source].cluster] += 1
        return busy

    def _refuse(self, action, view, hosts, busy):
        source, destination = hosts.get(action['source']), hosts.get(action['destination'])
        server = view.servers.get(action['instance'])
        if server is None or server.get('OS-EXT-SRV-ATTR:host') != action['source']:
            return 'instance no longer on %s' % action['source']
        if server.get('OS-EXT-STS:task_state'):
            return 'instance busy (%s)' % server['OS-EXT-STS:task_state']
        if destination is None or destination.power_state != model.ACTIVE:
            return 'destination not active'
        if source is None or source.excluded or destination.excluded:
            return 'host excluded by rules or stale statistics'
        if busy['source'][source.name] >= self.limits['per_host']:
            return 'source at its migration limit'
        if busy['destination'][destination.name] >= self.limits['per_destination']:
            return 'destination at its migration limit'
        if busy['cluster'][source.cluster] >= self.limits['per_cluster']:
            return 'cluster at its migration limit'
        last = lb_migrations.last_request(self.db, action['instance'])
        if last and self._now() - last['created_at'] < self.cooldown:
            return 'moved %s ago (cooldown)' % (self._now() - last['created_at'])
        return None

    def _migrate(self, action, view):
        server = view.servers[action['instance']]
        kind = 'live' if server['status'] in ('ACTIVE', 'PAUSED') else 'cold'
        if kind == 'cold' and server['status'] != 'SHUTOFF':
            return False
        request_id = lb_migrations.request(self.db, action['instance'], action['source'],
                                           action['destination'], kind, action['reason'])
        try:
            if kind == 'live':
                self.nova.live_migrate(action['instance'], action['destination'])
            else:
                self.nova.cold_migrate(action['instance'], action['destination'])
        except nova_api.NovaRequestFailed as exc:
            LOG.warning('nova refused %s: %s', action, exc)
            lb_migrations.finish(self.db, request_id, 'failed')
            return False
        LOG.info('migrating %(instance)s %(source)s -> %(destination)s (%(reason)s)', action)
        return True

    def settle(self, view, migration_timeout):
        """Close finished requests, confirm cold ones, abort those that overran."""
        timeout = datetime.timedelta(seconds=migration_timeout)
        for request in lb_migrations.open_requests(self.db):
            if request['destination'] is None:
                continue  # evacuation for a suspend: the host lifecycle settles it
            server = view.servers.get(request['instance_uuid'])
            if server is None:
                lb_migrations.finish(self.db, request['id'], 'done')
                continue
            where = server.get('OS-EXT-SRV-ATTR:host')
            task = server.get('OS-EXT-STS:task_state')
            if server['status'] == 'VERIFY_RESIZE' and request['kind'] == 'cold':
                try:
                    self.nova.confirm_resize(request['instance_uuid'])
                except nova_api.NovaRequestFailed as exc:
                    LOG.warning('confirming %s failed: %s', request['instance_uuid'], exc)
                    continue
                lb_migrations.finish(self.db, request['id'], 'done')
            elif where != request['source'] and not task:
                lb_migrations.finish(self.db, request['id'], 'done')
            elif task and self._now() - request['created_at'] > timeout:
                for migration in self.nova.server_migrations(request['instance_uuid']):
                    self.nova.abort_live_migration(request['instance_uuid'], migration['id'])
                lb_migrations.finish(self.db, request['id'], 'aborted')
            elif not task and where == request['source'] and \
                    self._now() - request['created_at'] > datetime.timedelta(seconds=30):
                lb_migrations.finish(self.db, request['id'], 'failed')
