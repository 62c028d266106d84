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

"""The twin's nova and placement: state, REST answers and dynamics.

The daemon reaches it through its real openstacksdk Connection; only the
transport differs (``connect``: a requests adapter mounted on the session,
no socket), so the daemon cannot tell it from a cloud. The answers have the
shapes of nova's and placement's API references, as far as the daemon reads
them (the same shapes ``benchmarks/cycle_scale.py`` serves).

Dynamics, all in virtual time (``oslo_utils.timeutils``' override, advanced
by the runner):

* a live migration goes queued -> preparing -> running -> completed (or
  ``error``); nova-compute runs one live migration per source host at a time
  (``[DEFAULT] max_concurrent_live_migrations = 1``), the rest queue. While it
  runs the server is ``MIGRATING`` with task_state ``migrating`` and holds
  allocations on both hosts; they follow it when it completes;
* its duration is the pre-copy model (``precopy_seconds``);
* a live migration without a host is placed by ``choose_host``, a stand-in
  for nova's scheduler with nova-drs's MigrationLimitFilter and power-saving
  weigher; a named host gets the same checks (``_accepts``: up, enabled, not
  the source, below the arrival limit, the CPU demand fits), as nova's
  scheduler without force;
* a powered-off host's nova-compute is ``down`` and stops heart-beating;
* faults (``twin.faults``): a call that hangs costs the caller its session's
  timeout of virtual time and ends in the read timeout requests raises (which
  keystoneauth turns into ``ConnectTimeout``); a vanished resource provider is
  missing from placement's listing and answers 404; a stalled migration runs
  until it is aborted.
"""

import collections
import datetime
import functools
import heapq
import itertools
import threading
import uuid as uuid_mod

from oslo_utils import timeutils

from nova_drs import aggregate_keys
from nova_drs import cluster_policy
from nova_drs.sim.twin import migrations
from nova_drs.sim.twin import paging

ENDPOINT = 'http://twin.invalid'
COMPUTE = '/compute/v2.1'
PLACEMENT = '/placement'
#: Placement ratio of the CloudSim null RAM/CPU model: after creation only the
#: CPU demand is checked, as in the core-only simulator (engine.UNBOUNDED_RATIO).
UNBOUNDED_RATIO = 1.0e6

VERSIONS = {
    COMPUTE: {'version': {
        'id': 'v2.1', 'status': 'CURRENT', 'version': '2.100', 'min_version': '2.1',
        'links': [{'rel': 'self', 'href': COMPUTE + '/'}]}},
    PLACEMENT: {'versions': [{
        'id': 'v1.0', 'status': 'CURRENT', 'max_version': '1.39', 'min_version': '1.0',
        'links': [{'rel': 'self', 'href': ''}]}]},
}


class NovaError(Exception):
    """An answer with an error status (the fault injector's 5xx included)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Hang(Exception):
    """The call never answers (the fault injector's hang)."""


class Host:
    def __init__(self, name, index, model, rng):
        self.name = name
        self.index = index
        self.model = model
        self.capacity = model.pes * model.pe_mips
        self.rp = str(uuid_mod.UUID(int=rng.getrandbits(128)))
        self.service_id = str(uuid_mod.UUID(int=rng.getrandbits(128)))
        self.generation = 1
        self.enabled = True
        self.disabled_reason = None
        self.powered = True          # drawing power (on, booting or shutting down)
        self.up = True               # nova-compute heart-beating
        self.heartbeat = None
        self.live_queue = []         # (server, migration) holding or awaiting its slot
        self.rp_gone_until = None    # while set, placement has no provider for it


class Cloud(migrations.Migrations):
    """Hosts and servers of one twin; every method runs under ``lock``."""

    def __init__(self, names, vm_types, models, host_names, placement, demand, rng,
                 bandwidth_mb_s, dirty_mb_s_at_full, faults):
        self.lock = threading.RLock()
        self.rng = rng
        self.faults = faults
        self.demand = demand                  # (vm index) -> MIPS now
        self.bandwidth = bandwidth_mb_s
        self.dirty_at_full = dirty_mb_s_at_full
        self.hosts = {n: Host(n, i, m, rng) for i, (n, m) in
                      enumerate(zip(host_names, models, strict=True))}
        self.by_rp = {h.rp: h for h in self.hosts.values()}
        self.servers = {}           # uuid -> nova server dict (live)
        self.vm_of = {}             # uuid -> vm index
        self.gone = []              # deleted servers, for changes-since
        self._cursor = paging.Cursor(ENDPOINT + COMPUTE)  # the listing being paged
        self.migrations = []        # nova migration records, oldest first
        self.events = []            # heap of (time, seq, callback)
        self._seq = itertools.count()
        self._migration_ids = itertools.count(1)
        self.requests = 0
        self._placed = None         # host -> servers holding allocations there
        self.observers = []         # callbacks(kind, **details) for the metrics
        now = timeutils.utcnow()
        for host in self.hosts.values():
            host.heartbeat = now
        for v, (name, (mips, ram), where) in enumerate(
                zip(names, vm_types, placement, strict=True)):
            uuid = str(uuid_mod.UUID(int=rng.getrandbits(128)))
            self.vm_of[uuid] = v
            self.servers[uuid] = {
                'id': uuid, 'name': name, 'status': 'ACTIVE', 'tenant_id': 'twin',
                'user_id': 'twin', 'created': migrations.stamp(now),
                'updated': migrations.stamp(now),
                'OS-EXT-SRV-ATTR:host': host_names[where],
                'OS-EXT-SRV-ATTR:hypervisor_hostname': host_names[where],
                'OS-EXT-STS:task_state': None, 'OS-EXT-STS:vm_state': 'active',
                'metadata': {},
                'flavor': {'vcpus': int(mips), 'ram': int(ram), 'disk': 0,
                           'original_name': 'planetlab-%d' % int(mips)}}

    # -- the REST side -----------------------------------------------------
    def answer(self, method, path, query, body):
        """(status, body) of one request."""
        with self.lock:
            self.requests += 1
            bare = path.rstrip('/')
            if bare in VERSIONS:
                return 200, VERSIONS[bare]
            try:
                if self.faults.api_call(method, bare):
                    raise Hang(method + ' ' + path)
                if bare.startswith(PLACEMENT):
                    return 200, self._placement(bare[len(PLACEMENT):].split('/'))
                if bare.startswith(COMPUTE):
                    return self._compute(method, bare[len(COMPUTE):], query, body)
            except NovaError as exc:
                return exc.status, {'error': {'code': exc.status, 'message': str(exc)}}
            return 404, {'itemNotFound': {'message': path, 'code': 404}}

    def _placement(self, parts):
        # ['', 'resource_providers', uuid, 'inventories'|'usages']
        if parts[1:] == ['resource_providers']:
            now = timeutils.utcnow()
            gone = self.faults.provider_vanishes(
                [h.name for h in self.hosts.values() if h.rp_gone_until is None])
            if gone is not None:
                self.hosts[gone].rp_gone_until = now + datetime.timedelta(
                    seconds=self.faults.rp_gone_seconds)
            for h in self.hosts.values():
                if h.rp_gone_until is not None and h.rp_gone_until <= now:
                    h.rp_gone_until = None
            return {'resource_providers': [
                {'uuid': h.rp, 'name': h.name, 'generation': h.generation}
                for h in self.hosts.values() if h.rp_gone_until is None]}
        host = self.by_rp.get(parts[2]) if len(parts) == 4 else None
        if host is None or host.rp_gone_until is not None:
            raise NovaError(404, 'no resource provider %s' % '/'.join(parts))
        if parts[3] == 'usages':
            return {'resource_provider_generation': host.generation,
                    'usages': self.usages(host.name)}
        cap = int(host.capacity)
        return {'resource_provider_generation': host.generation, 'inventories': {
            'VCPU': {'total': cap, 'reserved': 0, 'allocation_ratio': UNBOUNDED_RATIO,
                     'min_unit': 1, 'max_unit': cap, 'step_size': 1},
            'MEMORY_MB': {'total': host.model.ram_mb, 'reserved': 0,
                          'allocation_ratio': UNBOUNDED_RATIO, 'min_unit': 1,
                          'max_unit': host.model.ram_mb, 'step_size': 1}}}

    def placed(self):
        """host -> uuids of the servers holding allocations on it (their host,
        and the destination of a migration in progress); rebuilt only after
        allocations changed, so per-host reads stay linear at 10,000 hosts."""
        if self._placed is None:
            placed = collections.defaultdict(list)
            for uuid, server in self.servers.items():
                placed[server['OS-EXT-SRV-ATTR:host']].append(uuid)
                migration = server.get('_migration')
                if migration is not None:
                    placed[migration['dest_compute']].append(uuid)
            self._placed = placed
        return self._placed

    def usages(self, host):
        vcpu = ram = 0
        for uuid in self.placed().get(host, ()):
            flavor = self.servers[uuid]['flavor']
            vcpu += flavor['vcpus']
            ram += flavor['ram']
        return {'VCPU': vcpu, 'MEMORY_MB': ram} if vcpu else {}

    def _compute(self, method, path, query, body):
        parts = path.split('/')[1:]
        head = parts[0]
        if head == 'os-services':
            if method == 'PUT':
                return 200, {'service': self._set_service(parts[1], body)}
            hosts = [query['host']] if 'host' in query else list(self.hosts)
            return 200, {'services': [self.service(self.hosts[h]) for h in hosts
                                      if h in self.hosts]}
        if head == 'os-hypervisors':
            return 200, self._paged(path, query, 'hypervisors',
                                    lambda _query: self._hypervisors())
        if head == 'servers' and parts[1:] == ['detail']:
            body = self._paged(path, query, 'servers', self._listed_servers)
            body['servers'] = [_public(s) for s in body['servers']]
            return 200, body
        if head == 'servers' and len(parts) >= 2:
            server = self.servers.get(parts[1])
            if server is None:
                raise NovaError(404, 'Instance %s could not be found.' % parts[1])
            if len(parts) == 2:
                return 200, {'server': _public(server)}
            if parts[2] == 'action' and method == 'POST':
                return self._action(server, body or {})
            if parts[2] == 'migrations':
                if method == 'DELETE':
                    self._abort(server, parts[3])
                    return 202, None
                migration = server.get('_migration')
                shown = [] if migration is None or migration['status'] not in (
                    'queued', 'preparing', 'running') else [dict(
                        migration, server_uuid=server['id'])]
                return 200, {'migrations': shown}
        if head == 'os-migrations':
            return 200, self._paged(path, query, 'migrations', self._listed_migrations)
        if head == 'os-aggregates':
            return 200, {'aggregates': [{
                'id': 1, 'name': 'twin', 'availability_zone': None,
                'hosts': list(self.hosts),
                'metadata': {aggregate_keys.POLICY_KEY: cluster_policy.POWER_SAVING}}]}
        if head == 'os-server-groups':
            return 200, {'server_groups': []}
        raise NovaError(404, 'twin: no %s %s' % (method, path))

    def service(self, host):
        return {'id': host.service_id, 'host': host.name, 'binary': 'nova-compute',
                'zone': 'nova', 'status': 'enabled' if host.enabled else 'disabled',
                'state': 'up' if host.up else 'down', 'forced_down': False,
                'updated_at': migrations.stamp(host.heartbeat),
                'disabled_reason': host.disabled_reason}

    def _set_service(self, service_id, body):
        host = next((h for h in self.hosts.values() if h.service_id == service_id), None)
        if host is None:
            raise NovaError(404, 'Service %s not found.' % service_id)
        status = (body or {}).get('status')
        if status not in ('enabled', 'disabled'):
            raise NovaError(400, 'twin: service status %r' % status)
        host.enabled = status == 'enabled'
        host.disabled_reason = None if host.enabled else body.get('disabled_reason')
        return self.service(host)

    def _hypervisors(self):
        return [{'id': h.rp, 'hypervisor_hostname': h.name,
                 'state': 'up' if h.up else 'down',
                 'status': 'enabled' if h.enabled else 'disabled',
                 'vcpus': int(h.capacity), 'memory_mb': h.model.ram_mb,
                 'service': {'host': h.name, 'id': h.service_id}}
                for h in self.hosts.values()]

    def _listed_servers(self, query):
        if 'changes-since' in query:
            since = _parse(query['changes-since'])
            found = [s for s in list(self.servers.values()) + self.gone
                     if _parse(s['updated']) >= since]
        elif 'host' in query:
            found = [s for s in self.servers.values()
                     if s['OS-EXT-SRV-ATTR:host'] == query['host']]
        else:
            found = list(self.servers.values())
        return found     # made public page by page: a page costs its servers only

    def _listed_migrations(self, query):
        found = self.migrations
        for key in ('status', 'instance_uuid', 'source_compute', 'migration_type'):
            if key in query:
                found = [m for m in found if m[key] == query[key]]
        if 'changes-since' in query:
            since = _parse(query['changes-since'])
            found = [m for m in found if _parse(m['updated_at']) >= since]
        return [dict(m) for m in reversed(found)]      # newest first, as nova

    def _paged(self, path, query, key, build):
        body = self._cursor.page(path, query, key, build)
        if body is None:
            raise NovaError(400, 'marker %s not found' % query['marker'])
        return body

    # -- actions and dynamics --------------------------------------------------
    def _action(self, server, body):
        if 'os-migrateLive' not in body:
            raise NovaError(400, 'twin: action %s not modelled' % ', '.join(body))
        if server['status'] != 'ACTIVE' or server['OS-EXT-STS:task_state']:
            raise NovaError(409, 'Cannot live-migrate instance %s while it is in '
                            'task_state %s' % (server['id'], server['OS-EXT-STS:task_state']))
        source = server['OS-EXT-SRV-ATTR:host']
        wanted = (body['os-migrateLive'] or {}).get('host')
        if wanted is not None:
            target = self.hosts.get(wanted)
            if target is None or not self._accepts(target, server, source, self.arriving()):
                raise NovaError(400, 'No valid host was found. %s cannot take %s'
                                % (wanted, server['id']))
            destination = wanted
        else:
            destination = self.choose_host(server, source)
            if destination is None:
                raise NovaError(400, 'No valid host was found.')
        self._start_migration(server, source, destination)
        return 202, None

    def _abort(self, server, migration_id):
        migration = server.get('_migration')
        if migration is None or str(migration['id']) != str(migration_id):
            raise NovaError(404, 'migration %s not in progress' % migration_id)
        self._finish(server, migration, 'cancelled')

    def _bump(self, host):
        """Allocations changed: placement moves the provider's generation."""
        self.hosts[host].generation += 1
        self._placed = None

    def delete(self, uuid):
        """The server is gone (a retired trace): nova lists it DELETED."""
        server = self.servers.pop(uuid)
        migration = server.pop('_migration', None)
        if migration is not None:
            migration['status'] = 'cancelled'
            self._release(migration)
        server = dict(server, status='DELETED', updated=migrations.stamp(timeutils.utcnow()))
        self.gone.append(server)
        self._bump(server['OS-EXT-SRV-ATTR:host'])

    # -- virtual time -----------------------------------------------------------
    def at(self, when, callback):
        heapq.heappush(self.events, (when, next(self._seq), callback))

    def next_event(self, until):
        """Time of the next event at or before ``until``, else None."""
        if self.events and self.events[0][0] <= until:
            return self.events[0][0]
        return None

    def run_due(self):
        """Run the events due now (the runner has set the clock to their time)."""
        now = timeutils.utcnow()
        with self.lock:
            while self.events and self.events[0][0] <= now:
                heapq.heappop(self.events)[2]()
            for host in self.hosts.values():
                if host.up:
                    host.heartbeat = now


def _public(server):
    return {k: v for k, v in server.items() if not k.startswith('_')}


@functools.lru_cache(maxsize=1 << 18)
def _parse(text):
    """A timestamp of the twin's (one per server and migration update): parsed
    once, so a changes-since listing of 100,000 servers costs comparisons, not
    100,000 parses, and the twin's cost does not cloud the daemon's."""
    return timeutils.normalize_time(timeutils.parse_isotime(text))
