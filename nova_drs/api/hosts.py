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

"""``/loadbalancer`` and ``/loadbalancer/action``: hosts and their DRS state.

The API only records intent: a suspend is a compare-and-swap
``active -> suspending`` in the DRS database (held to the cluster's floor of
active hosts) and the daemon evacuates and powers the host off; maintenance
is ``active -> entering_maintenance`` and the daemon empties the host but
keeps it on. This process never migrates an instance or runs a power
command. Adding an action is one ``ACTIONS`` entry and its handler.
"""

import collections
import contextlib
import json

from nova.scheduler.client import report as placement_report
from oslo_log import log as logging
import webob.exc

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs import opt_out
from nova_drs.api import clusters
from nova_drs.api import nova_hosts
from nova_drs.api import rbac
from nova_drs.api import schemas
from nova_drs.db import hosts as db_hosts
from nova_drs.db import requests as db_requests
from nova_drs.db import statistics as db_statistics
from nova_drs.overcommit import nova_view
from nova_drs.power import base as power_base
from nova_drs.power import loader as power_loader
from nova_drs.power import paths as power_paths
from nova_drs.power import sealing
from nova_drs.scale import api as scale_api

LOG = logging.getLogger(__name__)

#: One action of POST /loadbalancer/action: its policy rule, the schema of
#: its arguments, and the HostsController method that runs it. A handler
#: whose schema has ``host`` gets the host checked against nova first.
Action = collections.namedtuple('Action', 'rule schema handler')

ACTIONS = {
    'suspend_host': Action(rbac.SUSPEND_HOST, schemas.SUSPEND_HOST, '_suspend_host'),
    'unsuspend_host': Action(rbac.UNSUSPEND_HOST, schemas.HOST_ACTION, '_unsuspend_host'),
    'wake_test': Action(rbac.WAKE_TEST, schemas.HOST_ACTION, '_wake_test'),
    'set_power': Action(rbac.SET_POWER, schemas.SET_POWER, '_set_power'),
    'clear_wake_failed': Action(rbac.CLEAR_WAKE_FAILED, schemas.HOST_ACTION,
                                '_clear_wake_failed'),
    'enter_maintenance': Action(rbac.ENTER_MAINTENANCE, schemas.HOST_ACTION,
                                '_enter_maintenance'),
    'exit_maintenance': Action(rbac.EXIT_MAINTENANCE, schemas.HOST_ACTION,
                               '_exit_maintenance'),
    'scale_server': Action(rbac.SCALE_SERVER, schemas.SCALE_SERVER, '_scale_server'),
}
ACTION_SCHEMAS = {name: action.schema for name, action in ACTIONS.items()}
ACTION_RULES = tuple(action.rule for action in ACTIONS.values())


@contextlib.contextmanager
def _scale_faults():
    """The scale checks' refusals as nova answers them: 404 / 409."""
    try:
        yield
    except exception.ScaleNotFound as exc:
        raise webob.exc.HTTPNotFound(str(exc)) from None
    except exception.ScaleRefused as exc:
        raise webob.exc.HTTPConflict(str(exc)) from None


def requester(context):
    return context.user_name or context.user_id


def host_view(nova_host, drs_host, stats):
    """One host of ``GET /loadbalancer``; never contains power options."""
    drs_host = drs_host or {}
    stats = stats or {}
    return {
        'host': nova_host['host'],
        'hypervisor_hostname': nova_host['hypervisor_hostname'],
        'suspend_state': drs_host.get('suspend_state', db_hosts.ACTIVE),
        'state_reason': drs_host.get('state_reason'),
        'state_changed_at': drs_host.get('state_changed_at'),
        'compute_service': nova_host.get('compute_service'),
        'cpu_used_percent': stats.get('cpu_used_percent'),
        'memory_total': nova_host['memory_total'],
        'memory_used': stats.get('memory_used'),
        'stats_sampled_at': stats.get('sampled_at'),
        'vcpus': nova_host['vcpus'],
        'instances': nova_host.get('instances', 0),
        'mac_to_wake': drs_host.get('mac_to_wake'),
        'power_driver': drs_host.get('power_driver'),
        'power_mode': drs_host.get('power_mode'),
        'wake_failed': drs_host.get('wake_failed', False),
    }


class HostsController:
    """Lists hosts, shows one, and records suspend/unsuspend/wake-test/power requests."""

    def __init__(self, database):
        self.database = database

    def list(self, context):
        nova = nova_hosts.compute_hosts(context)
        drs = db_hosts.public_records(self.database)
        stats = db_statistics.latest_summary(self.database, list(nova))
        return 200, {'hosts': [host_view(nova[name], drs.get(name), stats.get(name))
                               for name in sorted(nova)]}

    def show(self, context, host):
        view = self._view(context, host)
        view['pinned_servers'] = nova_hosts.pinned_servers(context, host)
        view['allocation'] = self._allocation(context, host)
        return 200, {'host': view}

    @staticmethod
    def _allocation(context, host):
        """Placement's allocated / capacity / ratio per resource class, or None
        when placement cannot say (the rest of the host is still shown)."""
        try:
            return nova_view.host_allocation(context.elevated(), host,
                                             placement_report.report_client_singleton())
        except Exception as exc:
            LOG.warning('nova-drs API: no allocation of host %s from placement: %s',
                        host, exc)
            return None

    def _view(self, context, host):
        nova = self._nova_host(context, host)
        return host_view(nova, db_hosts.public_records(self.database, host).get(host),
                         db_statistics.latest_summary(self.database, [host]).get(host))

    @staticmethod
    def _nova_host(context, host):
        found = nova_hosts.compute_hosts(context, host).get(host)
        if found is None:
            raise webob.exc.HTTPNotFound('compute host %r not found in nova' % host[:255])
        return found

    def action(self, context, body):
        try:
            name, arguments = schemas.single_action(body, ACTION_SCHEMAS)
        except exception.ValidationError as exc:
            raise webob.exc.HTTPBadRequest(str(exc)) from None
        action = ACTIONS[name]
        rbac.authorize(context, action.rule)
        if 'host' in arguments:
            nova = self._nova_host(context, arguments['host'])
            db_hosts.ensure(self.database, nova['host'], nova['hypervisor_hostname'])
        return getattr(self, action.handler)(context, arguments)

    def show_request(self, context, request_id):
        """A request of any kind: a scale with its progress, a wake test with its result."""
        request = db_requests.get(self.database, request_id)
        if request is None:
            raise webob.exc.HTTPNotFound('request %s not found' % request_id)
        return 200, {'request': request}

    def _current_state(self, host):
        return db_hosts.public_records(self.database, host)[host]['suspend_state']

    def _scale_server(self, context, arguments):
        with _scale_faults():
            return 202, {'request': scale_api.scale_server(
                context, self.database, drs_conf.CONF, arguments['server'],
                arguments['flavor'], requester(context))}

    @staticmethod
    def _opted_out(context, host):
        """Ids of the servers on ``host`` opted out with ``drs:automation=disabled``."""
        return [s['id'] for s in nova_hosts.pinned_servers(context, host)
                if s['level'] == opt_out.DISABLED]

    def _suspend_host(self, context, arguments):
        """An admin suspend; opted-out servers on the host need ``force`` (moved then)."""
        host = arguments['host']
        forced = arguments.get('force', False)
        opted_out = self._opted_out(context, host)
        if opted_out and not forced:
            raise webob.exc.HTTPConflict(
                'host %s cannot be suspended: servers %s opted out of DRS (%s=%s); pass '
                '"force": true (--force) to move them anyway, or move them first'
                % (host, ', '.join(opted_out), opt_out.KEY, opt_out.DISABLED))
        cluster = clusters.cluster_of(context, host, drs_conf.CONF)
        db_hosts.ensure_many(self.database, cluster.members)
        reason = 'suspend requested by %s' % requester(context)
        if forced:
            reason += ' (%s)' % opt_out.FORCED
        accepted, active = db_hosts.suspend_within_floor(
            self.database, host, cluster.members, cluster.floor, reason)
        if accepted is None:
            state = self._current_state(host)
            if state != db_hosts.ACTIVE:
                raise webob.exc.HTTPConflict('host %s is %s; only an active host can be suspended'
                                             % (host, state))
            raise webob.exc.HTTPConflict(
                'suspending host %s would leave %d active hosts in cluster %s, below its '
                'floor of %d (min_active_hosts %d + hosts_in_reserve %d); hosts already '
                'suspending count as gone'
                % (host, active - 1, cluster.name, cluster.floor, cluster.min_active_hosts,
                   cluster.hosts_in_reserve))
        return 202, self._evacuation_reply(context, host, opted_out, 'suspend')

    def _evacuation_reply(self, context, host, opted_out, what):
        """The host, and the opted-out servers an admin's request moves (logged too)."""
        if opted_out:
            LOG.warning('host %s: %s requested by %s moves servers opted out of DRS '
                        '(%s=%s): %s', host, what, requester(context), opt_out.KEY,
                        opt_out.DISABLED, ', '.join(opted_out))
        return {'host': self._view(context, host), 'opted_out_servers_moved': opted_out}

    def _unsuspend_host(self, context, arguments):
        host = arguments['host']
        user = requester(context)
        cancelled = db_hosts.transition(self.database, host, db_hosts.SUSPENDING,
                                        db_hosts.ACTIVE, 'suspend cancelled by %s' % user)
        if cancelled is None and db_hosts.transition(
                self.database, host, (db_hosts.SUSPENDED, db_hosts.ERROR),
                db_hosts.WAKING, 'wake requested by %s' % user) is None:
            record = db_hosts.get(self.database, host)
            if (record['suspend_state'] == db_hosts.SUSPENDING
                    and record['power_requested_at'] is not None):
                raise webob.exc.HTTPConflict(
                    'suspend already powering off: the power command of host %s left at %s; '
                    'unsuspend it once it is suspended' % (host, record['power_requested_at']))
            raise webob.exc.HTTPConflict(
                'host %s is %s; only a suspending, suspended or failed host can be '
                'unsuspended' % (host, record['suspend_state']))
        return 202, {'host': self._view(context, host)}

    def _clear_wake_failed(self, context, arguments):
        """The admin has fixed the wake path: the host may be consolidated again."""
        db_hosts.set_fields(self.database, arguments['host'], wake_failed=False)
        return 200, {'host': self._view(context, arguments['host'])}

    def _enter_maintenance(self, context, arguments):
        """Maintenance evacuates every server, opted out or not (as vSphere's)."""
        host = arguments['host']
        opted_out = self._opted_out(context, host)
        if db_hosts.transition(self.database, host, db_hosts.ACTIVE,
                               db_hosts.ENTERING_MAINTENANCE,
                               'maintenance requested by %s' % requester(context)) is None:
            raise webob.exc.HTTPConflict('host %s is %s; only an active host can enter maintenance'
                                         % (host, self._current_state(host)))
        return 202, self._evacuation_reply(context, host, opted_out, 'maintenance')

    def _exit_maintenance(self, context, arguments):
        host = arguments['host']
        if db_hosts.transition(self.database, host,
                               (db_hosts.ENTERING_MAINTENANCE, db_hosts.MAINTENANCE),
                               db_hosts.ACTIVE,
                               'maintenance ended by %s' % requester(context)) is None:
            raise webob.exc.HTTPConflict('host %s is %s; only a host entering or in maintenance '
                                         'can exit it' % (host, self._current_state(host)))
        return 202, {'host': self._view(context, host)}

    def _wake_test(self, context, arguments):
        host = arguments['host']
        request, created = db_requests.add(self.database, host, 'wake_test', requester(context))
        if not created:
            raise webob.exc.HTTPConflict('a wake test of host %s is already %s (request %d)'
                                         % (host, request['status'], request['id']))
        return 202, {'request': request}

    def _set_power(self, context, arguments):
        host = arguments['host']
        driver = arguments['driver']
        options = arguments.get('options', {})
        try:
            sealer = sealing.sealer_from_conf(drs_conf.CONF)
        except exception.SealError as exc:
            # This node's configuration, not the request, is at fault.
            raise webob.exc.HTTPInternalServerError(str(exc)) from None
        try:
            mode = arguments.get('mode') or power_loader.driver_class(driver).MODES[0]
            # The CLIs send every option as a string: type them by the schema.
            options = power_base.coerce_options(
                options, power_loader.driver_class(driver).schema_for(options))
            # The driver's own schema: required options, types, secrets.
            power_loader.check(driver, mode, options)
            # Files the daemon would open: only inside [drs_power] files_dir.
            power_paths.check_options(power_loader.driver_class(driver), options,
                                      drs_conf.CONF)
            # Secrets are stored sealed for nova-loadbalancer: this node can
            # write them but holds no key that reads them back.
            options = sealing.seal_options(
                options, power_loader.driver_class(driver).schema_for(options), host, sealer)
        except exception.PowerError as exc:
            raise webob.exc.HTTPBadRequest(str(exc)) from None
        fields = {'power_driver': driver, 'power_mode': mode,
                  'power_options': json.dumps(options)}
        if 'mac_to_wake' in arguments:
            fields['mac_to_wake'] = arguments['mac_to_wake']
        db_hosts.set_fields(self.database, host, **fields)
        return 200, {'host': self._view(context, host)}
