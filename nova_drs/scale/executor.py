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

"""Carries out ``scale_server`` requests, one step per request per daemon cycle.

The lead's daemon calls ``advance_scale_requests(nova, database, conf,
aggregates, hypervisors)`` once per cycle, with the aggregates and
hypervisors its observe phase listed: a request never lists them again.
Steps (the progress document in ``lb_requests.result`` says which one is
next, so a restarted daemon resumes):

pending  -> re-check the request, decide in place / move / refuse with the
            cluster's overcommit accounting, record the targets (which
            ``ScaleTargetFilter`` enforces in nova's scheduler), then resize.
resizing -> VERIFY_RESIZE on a target host: confirm, done. On a host outside
            the cluster (filter not enabled): revert. Back to ACTIVE on the
            old flavor (nova found no valid host / the resize failed): retry
            up to ``[drs_scale] scale_retry`` times, then fail.
reverting-> ACTIVE again on the old flavor: failed, with the reason.
"""

import time

from oslo_log import log as logging

from nova_drs import aggregate_keys
from nova_drs import exception
from nova_drs.db import overcommit as db_overcommit
from nova_drs.db import requests as db_requests
from nova_drs.overcommit import accounting
from nova_drs.scale import allocation
from nova_drs.scale import scalers

LOG = logging.getLogger(__name__)

HOST = 'OS-EXT-SRV-ATTR:host'


def is_true(value):
    """Server metadata / image property truth (``dynamically_scalable``)."""
    return str(value).strip().lower() in ('1', 'true', 'yes', 'on')


def _name(aggregate):
    return aggregate.get('name') or aggregate['id']


def scale_cluster(aggregates, host):
    """The aggregate of ``host`` with drs_scale_enabled=true (lowest id), or None."""
    enabled = [a for a in aggregates if host in (a.get('hosts') or ())
               and aggregate_keys.READER.value(_name(a), a.get('metadata'),
                                            aggregate_keys.SCALE_ENABLED_KEY,
                                               False)]
    return min(enabled, key=lambda a: a['id']) if enabled else None


def _flavor_of_server(server):
    flavor = server['flavor']
    return allocation.Flavor(flavor['vcpus'], flavor['ram'], flavor.get('original_name', ''))


def _ratio(aggregate, key):
    return aggregate_keys.READER.value(_name(aggregate), aggregate.get('metadata'), key)


def _figures(inventories, usages, resource_class):
    """(physical, used, placement's ratio) of one resource class of a provider."""
    inventory = inventories[resource_class]
    return (inventory['total'] - inventory['reserved'], usages.get(resource_class, 0),
            inventory['allocation_ratio'])


def cluster_capacities(nova, database, aggregate, providers):
    """``HostCapacity`` of every host of the aggregate, from placement.

    ``providers``: {host: compute node id} (a node's id is its resource
    provider's uuid) of the cycle's hypervisor listing.
    """
    try:
        recorded = db_overcommit.usage_by_host(database)
    except Exception as exc:
        LOG.warning('scale: recorded deployed-with ratios unreadable (%s); counting '
                    'flavor sizes', exc)
        recorded = {}
    capacities = []
    for host in aggregate.get('hosts') or ():
        provider = providers.get(host)
        if provider is None:
            continue
        inventories = nova.provider_inventories(provider)
        usages = nova.provider_usages(provider)
        capacities.append(allocation.host_capacity(
            host, _figures(inventories, usages, 'VCPU'),
            _figures(inventories, usages, 'MEMORY_MB'),
            _ratio(aggregate, accounting.CPU_KEY), _ratio(aggregate, accounting.RAM_KEY),
            recorded.get(host, {})))
    return capacities


def _fail(database, request, progress, reason):
    progress.update(phase='failed', message=reason)
    db_requests.update_scale(database, request, 'failed', progress)
    LOG.warning('scale request %d of server %s failed: %s', request['id'],
                request['server'], reason)


def _start(nova, database, request, progress, conf, listed):
    server_id = request['server']
    try:
        server = nova.server(server_id)
    except exception.NovaRequestFailed:
        return _fail(database, request, progress, 'server %s no longer exists' % server_id)
    if not conf.drs_scale.enabled:
        return _fail(database, request, progress, '[drs_scale] enabled is false')
    if server['status'] != 'ACTIVE' or server.get('OS-EXT-STS:task_state'):
        return _fail(database, request, progress, 'server is %s (task %s), not ACTIVE'
                     % (server['status'], server.get('OS-EXT-STS:task_state')))
    flavor = nova.flavor(progress['flavor_id'])
    if flavor is None:
        return _fail(database, request, progress,
                     'flavor %s no longer exists' % progress['flavor_id'])
    new = allocation.Flavor(flavor['vcpus'], flavor['ram'], flavor['name'])
    problem = allocation.request_problem(_flavor_of_server(server), new,
                                         conf.drs_scale.allow_scale_down)
    if problem:
        return _fail(database, request, progress, problem)
    source = server[HOST]
    aggregates, providers = listed
    cluster = scale_cluster(aggregates, source)
    if cluster is None:
        return _fail(database, request, progress, 'host %s is in no aggregate with %s=true'
                     % (source, aggregate_keys.SCALE_ENABLED_KEY))
    capacities = cluster_capacities(nova, database, cluster, providers)
    if not progress.get('same_host_allowed', True):
        # nova-api's allow_resize_to_same_host is off: nova never resizes in place.
        capacities = [c for c in capacities if c.host != source]
    decision = allocation.decide(source, cluster['name'], capacities, new)
    if decision.kind == allocation.REFUSE:
        return _fail(database, request, progress, decision.reason)
    progress.update(phase='resizing', decision=decision.kind, source=source,
                    cluster=cluster['name'], cluster_hosts=sorted(cluster['hosts']),
                    targets=list(decision.hosts), attempt=0,
                    old_flavor=_flavor_of_server(server).name, new_flavor=new.name)
    # Targets are persisted (running) before nova is asked: the filter reads them.
    if db_requests.update_scale(database, request, 'running', progress):
        request['status'] = 'running'
        _resize(nova, database, request, progress, conf)


def _resize(nova, database, request, progress, conf):
    progress['attempt'] += 1
    progress['started_at'] = time.time()
    progress['message'] = 'resize attempt %d of %d' % (progress['attempt'],
                                                       conf.drs_scale.scale_retry + 1)
    db_requests.update_scale(database, request, 'running', progress)
    try:
        scalers.load(conf.drs_scale.scaler).start(nova, request['server'],
                                                  progress['flavor_id'])
    except (exception.NovaRequestFailed, exception.NovaUnavailable) as exc:
        # nova 34 answers a resize without a valid host with HTTP 500
        # (NoValidHost raised through the API). The next cycle reads the
        # server: unchanged means a failed attempt; nova down skips the cycle.
        progress['last_error'] = str(exc)
        db_requests.update_scale(database, request, 'running', progress)


def _attempt_failed(nova, database, request, progress, conf, reason):
    progress['last_error'] = reason
    if progress['attempt'] <= conf.drs_scale.scale_retry:
        LOG.info('scale request %d: %s; retrying', request['id'], reason)
        return _resize(nova, database, request, progress, conf)
    _fail(database, request, progress, 'gave up after %d attempts: %s'
          % (progress['attempt'], reason))


def _advance(nova, database, request, progress, conf):
    server = nova.server(request['server'])
    status, host = server['status'], server[HOST]
    task = server.get('OS-EXT-STS:task_state')
    on_new_flavor = server['flavor'].get('original_name') == progress['new_flavor']
    if progress['phase'] == 'reverting':
        if status == 'ACTIVE' and not task:
            _fail(database, request, progress, progress['revert_reason'])
        return
    if status == 'VERIFY_RESIZE':
        if host not in progress['cluster_hosts']:
            progress.update(phase='reverting', revert_reason=(
                'nova resized the server onto %s, outside cluster %s (is ScaleTargetFilter '
                'enabled?); reverted' % (host, progress['cluster'])))
            db_requests.update_scale(database, request, 'running', progress)
            scalers.load(conf.drs_scale.scaler).revert(nova, request['server'])
            return
        scalers.load(conf.drs_scale.scaler).finish(nova, request['server'])
        status, on_new_flavor = 'ACTIVE', True
    if status == 'ACTIVE' and on_new_flavor and not task:
        how = ('in place on %s' % host if host == progress['source']
               else 'moved %s -> %s' % (progress['source'], host))
        progress.update(phase='done', host=host, message='scaled to %s %s'
                        % (progress['new_flavor'], how))
        db_requests.update_scale(database, request, 'done', progress)
    elif status == 'ERROR':
        _fail(database, request, progress, 'server went to ERROR during the resize: %s'
              % (server.get('fault') or {}).get('message', 'no fault recorded'))
    elif status == 'ACTIVE' and not task:
        _attempt_failed(nova, database, request, progress, conf, progress.get(
            'last_error') or 'nova did not resize the server (no valid host in %s?)'
            % ', '.join(progress['targets']))
    elif time.time() - progress['started_at'] > conf.drs_scale.step_timeout:
        _fail(database, request, progress, 'resize still %s/%s after %d s'
              % (status, task, conf.drs_scale.step_timeout))


def advance_scale_requests(nova, database, conf, aggregates, hypervisors):
    """One step of every open scale request; returns {request id: status after}.

    ``nova`` is a ``NovaAPI``, ``database`` the DRS ``Database``, ``conf`` the
    config object with ``[drs_scale]``; ``aggregates`` and ``hypervisors`` as
    the cycle's observe listed them. A request whose step fails
    unexpectedly is logged and retried next cycle; NovaUnavailable propagates
    (the cycle does nothing on a half view of nova).
    """
    listed = (aggregates, {h['service']['host']: h['id'] for h in hypervisors})
    outcome = {}
    for request in db_requests.open_scales(database):
        progress = dict(request.pop('progress'))
        try:
            if request['status'] == 'pending':
                _start(nova, database, request, progress, conf, listed)
            else:
                _advance(nova, database, request, progress, conf)
        except exception.NovaUnavailable:
            raise
        except Exception:
            LOG.exception('scale request %d: step failed; retried next cycle',
                          request['id'])
        current = db_requests.get_scale(database, request['id'])
        outcome[request['id']] = current['status'] if current else None
    return outcome
