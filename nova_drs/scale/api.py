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

"""The ``scale_server`` action's checks, run inside nova-api with the caller's context.

Everything a caller can get wrong is answered at once: ``ScaleNotFound`` or
``ScaleRefused``, which the API handler turns into 404 / 409; the daemon
re-checks when it starts, as things may change in between.
"""

from nova import conf as nova_conf
from nova import exception as nova_exception
from nova import objects
from nova.compute import api as compute_api

from nova_drs import aggregate_keys
from nova_drs import exception
from nova_drs.db import requests as db_requests
from nova_drs.scale import allocation
from nova_drs.scale import executor

SCALABLE_KEY = 'dynamically_scalable'
#: nova copies image properties into system metadata with this prefix.
IMAGE_PREFIX = 'image_'


def _instance(context, server_id):
    try:
        return compute_api.API().get(context, server_id,
                                     expected_attrs=['flavor', 'metadata', 'system_metadata'])
    except nova_exception.InstanceNotFound:
        raise exception.ScaleNotFound('server %s not found' % server_id) from None


def _flavor(context, flavor_ref):
    try:
        return objects.Flavor.get_by_flavor_id(context, flavor_ref)
    except nova_exception.FlavorNotFound:
        pass
    try:
        return objects.Flavor.get_by_name(context, flavor_ref)
    except nova_exception.FlavorNotFound:
        raise exception.ScaleNotFound('flavor %s not found (by id or name)' % flavor_ref) from None


def is_scalable(instance):
    """Server metadata ``dynamically_scalable``, else the image property of that name."""
    value = instance.metadata.get(SCALABLE_KEY)
    if value is None:
        value = instance.system_metadata.get(IMAGE_PREFIX + SCALABLE_KEY)
    return executor.is_true(value)


def check(context, conf, server_id, flavor_ref):
    """(instance, flavor) when the request is acceptable; else ScaleNotFound or ScaleRefused."""
    instance = _instance(context, server_id)
    flavor = _flavor(context, flavor_ref)
    if not conf.drs_scale.enabled:
        raise exception.ScaleRefused('server scaling is disabled ([drs_scale] enabled = false)')
    if instance.vm_state != 'active' or instance.task_state is not None:
        raise exception.ScaleRefused('server %s is %s (task %s); only an ACTIVE server can be '
                                     'scaled'
                                     % (server_id, instance.vm_state, instance.task_state))
    if not is_scalable(instance):
        raise exception.ScaleRefused('server %s is not flagged dynamically scalable (server '
                                     'metadata or image property %s=true)'
                                     % (server_id, SCALABLE_KEY))
    aggregates = [{'id': a.id, 'hosts': a.hosts or [], 'metadata': a.metadata or {}}
                  for a in objects.AggregateList.get_by_host(context, instance.host)]
    if executor.scale_cluster(aggregates, instance.host) is None:
        raise exception.ScaleRefused('server scaling is disabled for host %s: no aggregate of '
                                     'it has %s=true'
                                     % (instance.host, aggregate_keys.SCALE_ENABLED_KEY))
    old = allocation.Flavor(instance.flavor.vcpus, instance.flavor.memory_mb,
                            instance.flavor.name)
    new = allocation.Flavor(flavor.vcpus, flavor.memory_mb, flavor.name)
    problem = allocation.request_problem(old, new, conf.drs_scale.allow_scale_down)
    if problem:
        raise exception.ScaleRefused(problem)
    return instance, flavor


def scale_server(context, database, conf, server_id, flavor_ref, requested_by):
    """Check, then record the request for the daemon: the request dict."""
    instance, flavor = check(context, conf, server_id, flavor_ref)
    progress = {'phase': 'pending', 'flavor_id': flavor.flavorid, 'new_flavor': flavor.name,
                'same_host_allowed': nova_conf.CONF.allow_resize_to_same_host}
    request, created = db_requests.add_scale(database, instance.uuid, requested_by, progress)
    if not created:
        raise exception.ScaleRefused('server %s is already being scaled (request %d, %s)'
                                     % (instance.uuid, request['id'], request['status']))
    return request
