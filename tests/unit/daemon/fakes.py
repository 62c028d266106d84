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

"""An in-memory nova (and a power driver) for the daemon's unit tests.

The host lifecycle, the evacuation and the orchestrator decide what is safe
from what nova reports: servers and their host, status and task state,
nova-compute services ('status' enabled/disabled, 'state' up/down,
'updated_at' stamped by nova's clock), migration records, hypervisors and
placement usages. ``FakeNova`` speaks exactly the part of
``nova_drs.clients.nova_api.NovaAPI`` the daemon calls, with nova's dict
shapes (tests/unit/daemon/test_fakes.py holds it to that), so those safety
rules can be tested without booting nova.

Nothing happens on its own: a migration starts when the daemon asks for it
(the server gets a task state, nova a migration record) and completes,
fails or is aborted when the test says so (``finish``, ``fail``). Any
method can be made to raise (``faults``), as nova's errors do. Every call
the daemon makes is recorded in ``calls``, every move it asked for (refused
or not) in ``requests``.
"""

import datetime
import itertools

from oslo_utils import timeutils

from nova_drs import exception

LIVE, COLD = 'live-migration', 'migration'
#: where nova's scheduler puts a server the daemon sent to no host
SCHEDULER_CHOICE = 'chosen-by-nova'


def stamp(when):
    """nova's ISO 8601 form of a naive UTC datetime."""
    return when.isoformat()


def server(uuid, host, status='ACTIVE', task=None, metadata=None, extra_specs=None):
    """A nova server body (microversion >= 2.47: the flavor embedded)."""
    return {'id': uuid, 'status': status, 'OS-EXT-SRV-ATTR:host': host,
            'OS-EXT-STS:task_state': task, 'metadata': dict(metadata or {}),
            'flavor': {'extra_specs': dict(extra_specs or {})}}


class FakeNova:
    """nova as the daemon's NovaAPI sees it; the test drives its clock and
    the outcome of every migration."""

    def __init__(self, servers=None, clock=timeutils.utcnow):
        self.servers = servers if servers is not None else {}   # uuid -> server body
        self.services = {}          # host -> os-services body
        self.migration_records = []  # os-migrations bodies, oldest first
        self.extra_usages = {}      # host -> placement usages left without a server
        self.unallocated = set()    # servers placement holds nothing for (lost allocations)
        self.faults = {}            # method name -> exception, or callable(*args) -> one
        self.calls = []             # (method, args), in order
        self.requests = []          # (uuid, host asked for), every move asked
        self.running = {}           # uuid -> (source, destination) of moves under way
        self._clock = clock
        self._ids = itertools.count(1)

    # -- what the test sets up and decides --------------------------------
    def add_server(self, uuid, host, **fields):
        self.servers[uuid] = server(uuid, host, **fields)
        return self.servers[uuid]

    def add_service(self, host, status='enabled', state='up', updated_at=None):
        self.services[host] = {
            'id': 'svc-%s' % host, 'host': host, 'binary': 'nova-compute',
            'status': status, 'state': state, 'disabled_reason': None,
            'updated_at': stamp(updated_at or self._clock())}
        return self.services[host]

    def report(self, host, at=None, state='up'):
        """nova-compute on ``host`` sends a heartbeat (nova's clock, or ``at``)."""
        self.services[host].update(state=state, updated_at=stamp(at or self._clock()))

    def finish(self, uuids):
        """The moves of ``uuids`` under way complete (a cold one waits in VERIFY_RESIZE)."""
        for uuid in list(uuids):
            record = self._under_way(uuid)
            body = self.servers[uuid]
            self.running.pop(uuid)
            body.update({'OS-EXT-SRV-ATTR:host': record['dest_compute'],
                         'OS-EXT-STS:task_state': None})
            if record['migration_type'] == LIVE:
                body['status'], record['status'] = record['_was'], 'completed'
            else:
                body['status'], record['status'] = 'VERIFY_RESIZE', 'finished'

    def fail(self, uuid, status='error'):
        """The move of ``uuid`` under way fails: the server stays where it was."""
        record = self._under_way(uuid)
        self.running.pop(uuid)
        record['status'] = status
        self.servers[uuid].update({'status': record['_was'], 'OS-EXT-STS:task_state': None})

    def in_flight(self):
        """(source, destination) of every move under way, as cloud_view counts them."""
        return tuple(self.running.values())

    def called(self, method):
        return [args for name, args in self.calls if name == method]

    # -- internals --------------------------------------------------------
    def _call(self, method, *args):
        self.calls.append((method, args))
        fault = self.faults.get(method)
        if fault is not None and not isinstance(fault, BaseException):
            fault = fault(*args)
        if fault is not None:
            raise fault

    def _body(self, uuid, action):
        if uuid not in self.servers:
            raise exception.NovaRequestFailed('%s /servers/%s: HTTP 404' % (action, uuid), 404)
        return self.servers[uuid]

    def _under_way(self, uuid):
        assert uuid in self.running, '%s has no migration under way' % uuid
        return [r for r in self.migration_records if r['instance_uuid'] == uuid][-1]

    def _service_by_id(self, service_id):
        for body in self.services.values():
            if body['id'] == service_id:
                return body
        raise exception.NovaRequestFailed('PUT /os-services/%s: HTTP 404' % service_id, 404)

    def _start(self, uuid, host, kind, movable):
        body = self._body(uuid, 'POST')
        self.requests.append((uuid, host))
        if body['OS-EXT-STS:task_state'] or body['status'] not in movable:
            raise exception.NovaRequestFailed(
                "Cannot migrate instance %s while it is in vm_state %s, task_state %s: "
                "HTTP 409" % (uuid, body['status'], body['OS-EXT-STS:task_state']), 409)
        source, destination = body['OS-EXT-SRV-ATTR:host'], host or SCHEDULER_CHOICE
        self.migration_records.append({
            'id': next(self._ids), 'instance_uuid': uuid, 'source_compute': source,
            'dest_compute': destination, 'migration_type': kind,
            'status': 'running' if kind == LIVE else 'migrating',
            'created_at': stamp(self._clock()), '_was': body['status']})
        self.running[uuid] = (source, destination)
        if kind == LIVE:
            body.update({'status': 'MIGRATING', 'OS-EXT-STS:task_state': 'migrating'})
        else:
            body.update({'status': 'RESIZE', 'OS-EXT-STS:task_state': 'resize_migrating'})

    # -- NovaAPI: compute services -------------------------------------
    def compute_services(self):
        self._call('compute_services')
        return [dict(body) for body in self.services.values()]

    def compute_service(self, host):
        self._call('compute_service', host)
        body = self.services.get(host)
        return dict(body) if body is not None else None

    def disable_service(self, service_id, reason):
        self._call('disable_service', service_id, reason)
        self._service_by_id(service_id).update(status='disabled', disabled_reason=reason)

    def enable_service(self, service_id):
        self._call('enable_service', service_id)
        self._service_by_id(service_id).update(status='enabled', disabled_reason=None)

    # -- NovaAPI: servers ----------------------------------------------
    def servers_on_host(self, host):
        self._call('servers_on_host', host)
        return [dict(body) for body in self.servers.values()
                if body['OS-EXT-SRV-ATTR:host'] == host]

    def all_servers(self):
        self._call('all_servers')
        return [dict(body) for body in self.servers.values()]

    def server(self, server_id):
        self._call('server', server_id)
        return dict(self._body(server_id, 'GET'))

    def live_migrate(self, server_id, host=None):
        self._call('live_migrate', server_id, host)
        self._start(server_id, host, LIVE, ('ACTIVE', 'PAUSED'))

    def cold_migrate(self, server_id, host=None):
        self._call('cold_migrate', server_id, host)
        self._start(server_id, host, COLD, ('ACTIVE', 'SHUTOFF'))

    def confirm_resize(self, server_id):
        self._call('confirm_resize', server_id)
        body = self._body(server_id, 'POST')
        if body['status'] != 'VERIFY_RESIZE':
            raise exception.NovaRequestFailed('Instance %s is not in VERIFY_RESIZE: HTTP 409'
                                              % server_id, 409)
        record = [r for r in self.migration_records if r['instance_uuid'] == server_id][-1]
        body['status'], record['status'] = record['_was'], 'confirmed'

    # -- NovaAPI: migrations -------------------------------------------
    def server_migrations(self, server_id):
        """In-progress live migrations of one server."""
        self._call('server_migrations', server_id)
        return [self._public(r) for r in self.migration_records
                if r['instance_uuid'] == server_id and server_id in self.running
                and r['migration_type'] == LIVE and r['status'] == 'running']

    def abort_live_migration(self, server_id, migration_id):
        self._call('abort_live_migration', server_id, migration_id)
        for record in self.migration_records:
            if record['id'] == migration_id and record['instance_uuid'] == server_id:
                self.fail(server_id, status='cancelled')
                return
        raise exception.NovaRequestFailed('DELETE /servers/%s/migrations/%s: HTTP 404'
                                          % (server_id, migration_id), 404)

    def migrations(self, **filters):
        self._call('migrations', filters)
        return [self._public(r) for r in self.migration_records
                if all(r.get(key) == value for key, value in filters.items())]

    def migrations_in_status(self, statuses):
        found = []
        for status in sorted(statuses):
            found.extend(self.migrations(status=status))
        return found

    @staticmethod
    def _public(record):
        return {key: value for key, value in record.items() if not key.startswith('_')}

    # -- NovaAPI: inventory and placement ------------------------------
    def hypervisors(self):
        """One compute node per service; its id is its resource provider's uuid."""
        self._call('hypervisors')
        return [{'id': 'rp-%s' % host, 'hypervisor_hostname': host,
                 'service': {'host': host, 'id': body['id']}, 'state': body['state'],
                 'status': body['status']} for host, body in self.services.items()]

    def provider_usages(self, provider_uuid):
        """What placement holds: one VCPU per server on the host or moving to it,
        and per cold migration off it not yet confirmed (nova keeps the source's
        allocation on the migration until the resize is confirmed)."""
        self._call('provider_usages', provider_uuid)
        host = provider_uuid[len('rp-'):]
        usages = dict(self.extra_usages.get(host, {}))
        held = sum(1 for uuid, body in self.servers.items()
                   if body['OS-EXT-SRV-ATTR:host'] == host and uuid not in self.unallocated)
        held += sum(1 for _, destination in self.running.values() if destination == host)
        held += sum(1 for r in self.migration_records
                    if r['source_compute'] == host and r['status'] == 'finished')
        usages['VCPU'] = usages.get('VCPU', 0) + held
        return usages


class FakePower:
    """A power driver and its BMC: commands are recorded, and each may be
    scripted to raise; the host's power (``power``) changes when the test
    says so, as a real host goes down or comes up some time after the command."""

    NAME = 'fake'

    def __init__(self, power='on', can_suspend=True, can_wake=True):
        self.power = power
        self.calls = []             # (command, host)
        self.faults = {}            # command -> exception raised
        self.able = {'suspend': can_suspend, 'wake': can_wake}

    def __call__(self, record):
        """The power_drivers lookup the lifecycle is given: (driver, target)."""
        return self, Target(record['host'])

    def can_suspend(self, options):
        return self.able['suspend']

    def can_wake(self, options):
        return self.able['wake']

    def _command(self, command, target):
        self.calls.append((command, target.name))
        if command in self.faults:
            raise self.faults[command]

    def suspend(self, target):
        self._command('suspend', target)

    def wake(self, target):
        self._command('wake', target)

    def status(self, target):
        self._command('status', target)
        return self.power

    def sent(self, command):
        return [host for name, host in self.calls if name == command]


class Target:
    def __init__(self, name):
        self.name, self.options = name, {}


def later(when, seconds):
    return when + datetime.timedelta(seconds=seconds)
