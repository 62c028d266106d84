"""``/loadbalancer`` and ``/loadbalancer/action``: hosts and their DRS state.

The API only records intent: a suspend is a compare-and-swap
``active -> suspending`` in the DRS database and the daemon evacuates and
powers the host off. This process never migrates an instance or runs a power
command.
"""

import json

from nova_drs.api import faults
from nova_drs.api import nova_hosts
from nova_drs.api import policies
from nova_drs.api import schemas
from nova_drs.api import store
from nova_drs import conf as drs_conf
from nova_drs.db import hosts as db_hosts
from nova_drs.power import base as power_base
from nova_drs.power import loader as power_loader
from nova_drs.scale import api as scale_api

ACTION_RULES = {
    'suspend_host': policies.SUSPEND_HOST,
    'unsuspend_host': policies.UNSUSPEND_HOST,
    'wake_test': policies.WAKE_TEST,
    'set_power': policies.SET_POWER,
    'scale_server': policies.SCALE_SERVER,
}


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
        policies.authorize(context, policies.HOST_LIST)
        nova = nova_hosts.compute_hosts(context)
        drs = store.drs_hosts(self.database)
        stats = store.latest_stats(self.database, list(nova))
        return 200, {'hosts': [host_view(nova[name], drs.get(name), stats.get(name))
                               for name in sorted(nova)]}

    def show(self, context, host):
        policies.authorize(context, policies.HOST_SHOW)
        return 200, {'host': self._view(context, host)}

    def _view(self, context, host):
        nova = self._nova_host(context, host)
        return host_view(nova, store.drs_hosts(self.database, host).get(host),
                         store.latest_stats(self.database, [host]).get(host))

    @staticmethod
    def _nova_host(context, host):
        found = nova_hosts.compute_hosts(context, host).get(host)
        if found is None:
            raise faults.NotFound('compute host %r not found in nova' % host[:255])
        return found

    def action(self, context, body):
        try:
            name, arguments = schemas.single_action(body, schemas.HOST_ACTIONS)
        except schemas.ValidationError as exc:
            if not any(policies.allowed(context, rule) for rule in ACTION_RULES.values()):
                raise faults.Forbidden('policy does not allow loadbalancer actions') from None
            raise faults.BadRequest(str(exc)) from None
        policies.authorize(context, ACTION_RULES[name])
        if name == 'scale_server':
            return 202, {'request': scale_api.scale_server(
                context, self.database, drs_conf.CONF, arguments['server'],
                arguments['flavor'], requester(context))}
        host = arguments['host']
        nova = self._nova_host(context, host)
        db_hosts.ensure(self.database, host, nova['hypervisor_hostname'])
        return getattr(self, '_' + name)(context, host, arguments)

    def show_request(self, context, request_id):
        policies.authorize(context, policies.SCALE_SHOW)
        if not request_id.isdigit() or int(request_id) > 2 ** 31 - 1:
            raise faults.NotFound('request %r not found' % request_id[:64])
        return 200, {'request': scale_api.show(self.database, int(request_id))}

    def _current_state(self, host):
        return store.drs_hosts(self.database, host)[host]['suspend_state']

    def _suspend_host(self, context, host, arguments):
        reason = 'suspend requested by %s' % requester(context)
        if db_hosts.transition(self.database, host, db_hosts.ACTIVE,
                               db_hosts.SUSPENDING, reason) is None:
            raise faults.Conflict('host %s is %s; only an active host can be suspended'
                                  % (host, self._current_state(host)))
        return 202, {'host': self._view(context, host)}

    def _unsuspend_host(self, context, host, arguments):
        user = requester(context)
        cancelled = db_hosts.transition(self.database, host, db_hosts.SUSPENDING,
                                        db_hosts.ACTIVE, 'suspend cancelled by %s' % user)
        if cancelled is None and db_hosts.transition(
                self.database, host, (db_hosts.SUSPENDED, db_hosts.ERROR),
                db_hosts.WAKING, 'wake requested by %s' % user) is None:
            raise faults.Conflict(
                'host %s is %s; only a suspending, suspended or failed host can be '
                'unsuspended' % (host, self._current_state(host)))
        return 202, {'host': self._view(context, host)}

    def _wake_test(self, context, host, arguments):
        request, created = store.add_request(self.database, host, 'wake_test',
                                             requester(context))
        if not created:
            raise faults.Conflict('a wake test of host %s is already %s (request %d)'
                                  % (host, request['status'], request['id']))
        return 202, {'request': request}

    def _set_power(self, context, host, arguments):
        driver = arguments['driver']
        options = arguments.get('options', {})
        try:
            mode = arguments.get('mode') or power_loader.driver_class(driver).MODES[0]
            # The driver's own schema: required options, types, secrets.
            power_loader.check(driver, mode, options)
        except power_base.PowerError as exc:
            raise faults.BadRequest(str(exc)) from None
        fields = {'power_driver': driver, 'power_mode': mode,
                  'power_options': json.dumps(options)}
        if 'mac_to_wake' in arguments:
            fields['mac_to_wake'] = arguments['mac_to_wake']
        db_hosts.set_fields(self.database, host, **fields)
        return 200, {'host': self._view(context, host)}
