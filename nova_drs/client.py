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

"""The one client of nova-drs's ``/loadbalancer`` API, for both CLIs.

``openstack drs`` (osc/) and ``nova lb-*`` (novaclient_ext/) are thin
layers over ``DrsClient``: each hands it its keystoneauth session and the
error class its shell prints as one line. The API is served by nova-api, so
the client talks to the compute endpoint. ``wait`` is the one poller behind
every ``--wait``.
"""

# stdlib logging, not oslo_log: the secret masks are logging.Filter
# subclasses attached to stdlib loggers, and the client runs in processes
# (openstack, nova CLI) that configure stdlib logging, not oslo.log.
import collections
import contextlib
import datetime
import json
import logging
import re
import time
from urllib import parse

from keystoneauth1 import adapter
from oslo_utils import timeutils

from nova_drs import exception
from nova_drs.power import base as power_base
from nova_drs.power import loader as power_loader


class HostChange(collections.namedtuple('HostChange', 'verb wanted otherwise service',
                                        defaults=(None,))):
    """A host action both CLIs can wait for: the word they print, the state it
    aims at, the states that end the wait without reaching it, and the status
    nova-compute must have too once it is reached (None: any)."""

    def status_of(self, host):
        """What the wait compares with the end states: the host's state, unless it
        is the wanted one while nova-compute is not yet as wanted (an older API
        that does not show the service is taken at its word)."""
        state = host['suspend_state']
        service = host.get('compute_service')
        if state == self.wanted and self.service and service not in (None, self.service):
            return '%s, nova-compute still %s' % (state, service)
        return state

    @staticmethod
    def progress(name, host):
        """A ``--wait`` progress line: state, nova-compute status and why."""
        line = '%s: %s' % (name, host['suspend_state'])
        if host.get('compute_service'):
            line += ' (nova-compute %s)' % host['compute_service']
        if host.get('state_reason'):
            line += ': %s' % host['state_reason']
        return line

    def accepted(self, host, state):
        return '%s of %s accepted (state: %s)' % (self.verb, host, state)

    def failed(self, host, state):
        return '%s of %s failed: it is %s' % (self.verb, host, state)


HOST_CHANGES = {
    'suspend_host': HostChange('Suspend', 'suspended', ('error', 'active')),
    'unsuspend_host': HostChange('Unsuspend', 'active', ('error',)),
    'enter_maintenance': HostChange('Maintenance', 'maintenance', ('error', 'active')),
    # The daemon re-enables nova-compute the cycle after the host became active.
    'exit_maintenance': HostChange('Exit from maintenance', 'active', ('error',), 'enabled'),
}


def opted_out_moved(reply):
    """The line both CLIs print when an admin's suspend or maintenance moves servers
    opted out of DRS (``opted_out_servers_moved`` of the reply), else None."""
    moved = reply.get('opted_out_servers_moved')
    if not moved:
        return None
    return 'servers opted out of DRS (drs:automation=disabled) that move too: %s' % (
        ', '.join(moved))


def allocation_text(rows):
    """``VCPU: 3 of 8 (ratio 4.0, 37.5 %)`` lines: placement's allocated of capacity
    (a host's ``allocation``, shown alike by both CLIs' host show)."""
    if rows is None:
        return 'unknown (placement did not answer)'
    return '\n'.join('%s: %g of %g (ratio %g, %s %%)' % (
        row['resource_class'], row['allocated'], row['capacity'], row['allocation_ratio'],
        row['used_percent']) for row in rows)


#: Every status of a plan (``--status`` of both CLIs' plan list; db.plans.STATUSES).
PLAN_STATUSES = ('pending', 'approved', 'rejected', 'superseded', 'executing', 'done',
                 'failed')

#: Columns of a plan's actions in ``plan show``: (heading, key of plan_action_row()).
PLAN_ACTION_COLUMNS = (('#', 'position'), ('Type', 'type'), ('Instance/Host', 'subject'),
                       ('Source', 'source'), ('Destination', 'destination'),
                       ('Reason', 'reason'), ('Status', 'status'))


def plan_action_row(position, action):
    """Action ``position`` (from 1) of a shown plan as a row of PLAN_ACTION_COLUMNS: a
    migration's instance, a suspend's or wake's host; its status with the detail."""
    if not isinstance(action, dict):  # an entry written by hand: shown as it is
        return {'position': position, 'type': json.dumps(action)}
    status = action.get('status')
    if status and action.get('detail'):
        status = '%s: %s' % (status, action['detail'])
    return {'position': position, 'type': action.get('type'),
            'subject': action.get('instance') or action.get('host'),
            'source': action.get('source'), 'destination': action.get('destination'),
            'reason': action.get('reason'), 'status': status}


def text_table(columns, rows):
    """Lines of ``rows`` (dicts) under the headings of ``columns`` ((heading, key)),
    each column as wide as its widest cell, a missing value blank; '' without rows."""
    if not rows:
        return ''
    lines = [[heading for heading, _ in columns]] + [
        ['' if row.get(key) is None else str(row[key]) for _, key in columns]
        for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(*lines, strict=True)]
    return '\n'.join('  '.join(cell.ljust(width) for cell, width
                                in zip(line, widths, strict=True)).rstrip()
                      for line in lines)


#: Columns of ``plan list`` in both CLIs: (heading, key of plan_row()).
PLAN_COLUMNS = (('ID', 'id'), ('Cluster', 'cluster'), ('Mode', 'mode'),
                ('Status', 'status'), ('Age', 'age'), ('Actions', 'actions'),
                ('Progress', 'progress'))


def plan_progress(progress):
    """``done 3, pending 7``: a plan's actions per status."""
    return ', '.join('%s %d' % item for item in sorted((progress or {}).items()))


def plan_row(plan):
    """A listed plan as both CLIs print it: its age (``1 day, 2:05:00``) and progress."""
    created = timeutils.normalize_time(timeutils.parse_isotime(plan['created_at']))
    seconds = max(0, int((timeutils.utcnow() - created).total_seconds()))
    return dict(plan, age=str(datetime.timedelta(seconds=seconds)),
                progress=plan_progress(plan['progress']))


#: The loggers keystoneauth writes request bodies to (``--debug`` prints them);
#: keystoneauth1 names its loggers ``keystoneauth.*``.
REQUEST_LOGGERS = ('keystoneauth.session', 'keystoneauth.session.request')


class _Mask(logging.Filter):
    """Replaces each secret, as typed and as JSON-escaped, by ``***`` in a record."""

    def __init__(self, secrets):
        super().__init__()
        self.forms = set(secrets) | {json.dumps(secret)[1:-1] for secret in secrets}

    def filter(self, record):
        message = record.getMessage()
        masked = power_base.scrub(message, self.forms)
        if masked != message:
            record.msg, record.args = masked, ()
        return True


@contextlib.contextmanager
def masked_logs(secrets, loggers=REQUEST_LOGGERS):
    """While inside, ``secrets`` never reach a log line of ``loggers``: keystoneauth
    logs request bodies unmasked, and ``--debug`` prints them."""
    if not secrets:
        yield
        return
    mask = _Mask(secrets)
    targets = [logging.getLogger(name) for name in loggers]
    for logger in targets:
        logger.addFilter(mask)
    try:
        yield
    finally:
        for logger in targets:
            logger.removeFilter(mask)


class SecretOptionMask(logging.Filter):
    """Masks the value of every secret power option *by name* in a record:
    ``kg=…`` in a command line, ``'kg': '…'`` in a repr, ``"kg": "…"`` in JSON.

    For lines logged before the client knows the values: osc-lib logs the
    command line (``START with options``, masking only password-like words)
    and each command's parsed arguments (``run(Namespace(...))``) unmasked.
    The names are those the installed drivers' schemas declare secret.
    """

    def __init__(self):
        super().__init__()
        self._patterns = None

    def patterns(self):
        if self._patterns is None:
            names = {'password', 'passphrase', 'kg'}
            for driver in power_loader.names():
                try:
                    schema = power_loader.driver_class(driver).OPTIONS
                except exception.PowerError:
                    continue
                names |= {key for key in schema.get('properties', {})
                          if power_base.is_secret(key, schema)}
            words = '|'.join(sorted(map(re.escape, names)))
            self._patterns = (
                re.compile(r"""(?<![\w-])((?:%s)=)[^\s'",}]+""" % words),
                re.compile(r"""((['"])(?:%s)\2\s*:\s*)(['"])(?:\\.|(?!\3).)*\3""" % words))
        return self._patterns

    def filter(self, record):
        message = record.getMessage()
        equals, quoted = self.patterns()
        masked = quoted.sub(lambda m: '%s%s***%s' % (m.group(1), m.group(3), m.group(3)),
                            equals.sub(r'\1***', message))
        if masked != message:
            record.msg, record.args = masked, ()
        return True


def power_secrets(driver, options):
    """The secret values of ``options`` as driver ``driver``'s schema declares them
    (judged by name when the driver is not installed on this client)."""
    try:
        return power_loader.driver_class(driver).secret_values(options or {})
    except exception.PowerError:
        return power_base.secret_values(options or {})


def _error_message(response):
    """nova's fault message (``{"conflictingRequest": {"message": ...}}``) or the text."""
    try:
        body = response.json()
        (fault,) = body.values()
        message = fault['message']
    except (ValueError, TypeError, KeyError, AttributeError):
        message = response.text.strip() or response.reason
    return '%s (HTTP %d)' % (message, response.status_code)


def _quote(value):
    return parse.quote(str(value), safe='')


def compute_adapter(session, **where):
    """The API is nova-api's: the compute endpoint of the catalog (or ``where``'s override)."""
    return adapter.Adapter(session=session, service_type='compute', **where)


class DrsClient:
    """Every method returns the decoded JSON of one API call, or raises ``error``."""

    def __init__(self, session, region_name=None, interface=None, endpoint_override=None,
                 error=exception.DrsError):
        self.adapter = compute_adapter(session, region_name=region_name, interface=interface,
                                       endpoint_override=endpoint_override)
        self.error = error

    def _request(self, method, path, body=None, secrets=()):
        """One call; ``secrets`` (values in ``body``) are masked in keystoneauth's logs."""
        with masked_logs(secrets):
            response = self.adapter.request(path, method, json=body, raise_exc=False)
        if response.status_code >= 400:
            raise self.error(_error_message(response))
        return response.json() if response.content else None

    def list_hosts(self):
        return self._request('GET', '/loadbalancer')['hosts']

    def get_host(self, host):
        return self._request('GET', '/loadbalancer/%s' % _quote(host))['host']

    def action(self, name, **arguments):
        """``POST /loadbalancer/action``: the host (or request) it answers with."""
        secrets = (power_secrets(arguments.get('driver'), arguments.get('options'))
                   if name == 'set_power' else ())
        return self._request('POST', '/loadbalancer/action', {name: arguments}, secrets)

    def list_rules(self):
        return self._request('GET', '/loadbalancer/rules')['rules']

    def create_rule(self, rule_type, value, allow):
        body = {'rule': {'type': rule_type, 'value': value, 'allow': allow}}
        return self._request('POST', '/loadbalancer/rules', body)['rule']

    def delete_rule(self, rule_id):
        self._request('DELETE', '/loadbalancer/rules/%s' % _quote(rule_id))

    def get_plan(self, cluster=None, plan_id=None):
        """Plan ``plan_id``, else the newest one (of ``cluster``), or None."""
        if plan_id is not None:
            return self._request('GET', '/loadbalancer/plans/%s' % _quote(plan_id))['plan']
        path = '/loadbalancer/plan'
        if cluster:
            path += '?' + parse.urlencode({'cluster': cluster})
        return self._request('GET', path)['plan']

    def list_plans(self, status=None, cluster=None, limit=None):
        query = {name: value for name, value in
                 (('status', status), ('cluster', cluster), ('limit', limit)) if value}
        path = '/loadbalancer/plans' + ('?' + parse.urlencode(query) if query else '')
        return self._request('GET', path)['plans']

    def decide_plan(self, decision, plan_id):
        body = {decision: {'plan_id': plan_id}}
        return self._request('POST', '/loadbalancer/plan/action', body)['plan']

    def list_policies(self):
        return self._request('GET', '/loadbalancer/policies')['policies']

    def energy_report(self, since, cluster=None):
        query = {'since': since}
        if cluster:
            query['cluster'] = cluster
        return self._request('GET', '/loadbalancer/energy?' + parse.urlencode(query))['energy']

    def explain(self, kind, subject, cycles):
        """Stored decisions about a host or a server (kind "host" or "server")."""
        return self._request('GET', '/loadbalancer/explain/%ss/%s?cycles=%d'
                             % (kind, _quote(subject), cycles))

    def get_request(self, request_id):
        return self._request('GET', '/loadbalancer/requests/%s' % _quote(request_id))['request']

    def wait_host(self, host, action, timeout, interval, report):
        """Poll ``host`` until ``action`` (a ``HOST_CHANGES`` key) ended; the host's last view.

        ``report`` gets a line each time the state, nova-compute's status or
        the reason (why a maintenance waits, which host is woken) changes."""
        change = HOST_CHANGES[action]
        return wait(lambda: self.get_host(host), change.status_of,
                    (change.wanted,) + change.otherwise,
                    lambda h: change.progress(host, h),
                    '%s to become %s%s' % (host, change.wanted, ' with nova-compute %s'
                                           % change.service if change.service else ''),
                    timeout, interval, report, self.error)

    def wait_request(self, request_id, timeout, interval, report):
        """Poll a request (scale, wake test) until done or failed; its last view."""
        return wait(lambda: self.get_request(request_id), lambda r: r['status'],
                    ('done', 'failed'),
                    lambda r: 'request %s: %s %s' % (request_id, r['status'], (
                        r.get('progress') or {}).get('message') or r.get('result') or ''),
                    'request %s' % request_id, timeout, interval, report, self.error)


def wait(fetch, status_of, ends, describe, what, timeout, interval, report, error):
    """Poll ``fetch()`` until ``status_of(item)`` is in ``ends``: the last item.

    ``report`` gets ``describe(item)`` each time it changes; past ``timeout``
    seconds ``error`` is raised naming ``what`` was awaited.
    """
    deadline = time.monotonic() + timeout
    line = None
    while True:
        item = fetch()
        if describe(item) != line:
            line = describe(item)
            report(line)
        if status_of(item) in ends:
            return item
        if time.monotonic() >= deadline:
            raise error('timed out after %ss waiting for %s (still %s)'
                        % (timeout, what, status_of(item)))
        time.sleep(interval)
