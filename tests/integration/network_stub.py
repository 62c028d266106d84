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

"""A stand-in for the ``network`` (Neutron) endpoint of the mini-cloud.

It holds what nova asks Neutron for and nothing below it (no L2, no L3, no
DHCP): one shared network ``private`` with one subnet, and the ports nova
creates on it. So a boot without ``--nic`` (``networks: auto`` from
microversion 2.37, what ``openstack server create`` sends) gets a port on
``private`` with an address, as on a cloud with one shared network, and
``--nic none`` still boots without one. Ports follow their server: nova
binds them to the new host on a live migration (the legacy flow: no
``binding-extended`` extension is advertised) and deletes them with the
server. State lives in this one uwsgi process (``--processes 1``), guarded
by a lock for its threads, and is lost when the cloud stops, as the servers'
are. It checks no token: it holds nothing secret.
"""

import copy
import ipaddress
import itertools
import json
import threading
import urllib.parse
import uuid

NETWORK_ID = '6d2c3f4e-0a2b-4c5d-8e9f-000000000001'
SUBNET_ID = '6d2c3f4e-0a2b-4c5d-8e9f-000000000002'
CIDR = ipaddress.ip_network('10.0.0.0/24')
VERSIONS = {'versions': [{'id': 'v2.0', 'status': 'CURRENT', 'links': []}]}

NETWORK = {
    'id': NETWORK_ID, 'name': 'private', 'description': '', 'status': 'ACTIVE',
    'subnets': [SUBNET_ID], 'admin_state_up': True, 'shared': True,
    'tenant_id': '', 'project_id': '', 'mtu': 1450, 'router:external': False,
    'port_security_enabled': False, 'availability_zones': ['nova'],
    'provider:network_type': 'local', 'provider:physical_network': None,
}
SUBNET = {
    'id': SUBNET_ID, 'name': 'private-subnet', 'network_id': NETWORK_ID,
    'ip_version': 4, 'cidr': str(CIDR), 'gateway_ip': str(CIDR[1]),
    'enable_dhcp': False, 'dns_nameservers': [], 'host_routes': [],
    'tenant_id': '', 'project_id': '',
}


class NotFound(Exception):
    """Answered as Neutron's 404 fault."""


class Neutron:
    """The stand-in's state: ports on the one network; everything else fixed."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ports = {}
        self.addresses = itertools.islice(CIDR.hosts(), 9, None)

    def collection(self, name, filters):
        items = {'networks': [NETWORK], 'subnets': [SUBNET],
                 'ports': list(self.ports.values())}.get(name, [])
        return [copy.deepcopy(item) for item in items if _matches(item, filters)]

    def show(self, name, item_id):
        found = self.collection(name, {'id': [item_id]})
        if not found:
            raise NotFound('%s %s not found' % (name[:-1], item_id))
        return found[0]

    def create_port(self, body):
        port = {
            'id': str(uuid.uuid4()), 'name': '', 'description': '',
            'network_id': NETWORK_ID, 'admin_state_up': True, 'status': 'ACTIVE',
            'mac_address': 'fa:16:3e:%02x:%02x:%02x' % tuple(uuid.uuid4().bytes[:3]),
            'fixed_ips': [{'subnet_id': SUBNET_ID, 'ip_address': str(next(self.addresses))}],
            'device_id': '', 'device_owner': '', 'security_groups': [],
            'binding:host_id': '', 'binding:vif_type': 'ovs', 'binding:vnic_type': 'normal',
            'binding:vif_details': {'port_filter': True}, 'binding:profile': {},
            'tenant_id': '', 'project_id': '',
        }
        if body.get('network_id', NETWORK_ID) != NETWORK_ID:
            raise NotFound('network %s not found' % body['network_id'])
        port.update({key: value for key, value in body.items() if key in port})
        port['project_id'] = port['tenant_id']
        self.ports[port['id']] = port
        return copy.deepcopy(port)

    def update_port(self, port_id, body):
        self.show('ports', port_id)
        port = self.ports[port_id]
        port.update({key: value for key, value in body.items() if key != 'id'})
        return copy.deepcopy(port)

    def delete_port(self, port_id):
        self.show('ports', port_id)
        del self.ports[port_id]


def _matches(item, filters):
    """Neutron's list filters: each key one of its values ('True' is True)."""
    for key, wanted in filters.items():
        value = item.get(key)
        if isinstance(value, bool):
            value = str(value)
        if str(value) not in wanted and value not in wanted:
            return False
    return True


def _route(neutron, method, parts, query, body):
    """(status, body) for one request; parts is the path after /v2.0."""
    name = parts[0].split('.')[0] if parts else ''
    filters = {key: values for key, values in query.items() if key != 'fields'}
    if method == 'GET' and name == 'extensions' and len(parts) == 1:
        return 200, {'extensions': []}
    if method == 'GET' and name == 'quotas' and len(parts) == 2:
        return 200, {'quota': {'port': -1, 'network': -1, 'subnet': -1}}
    if method == 'GET' and len(parts) == 1:
        return 200, {name: neutron.collection(name, filters)}
    if method == 'GET' and len(parts) == 2:
        return 200, {name[:-1]: neutron.show(name, parts[1].split('.')[0])}
    if name == 'ports' and method == 'POST' and len(parts) == 1:
        return 201, {'port': neutron.create_port(body.get('port', {}))}
    if name == 'ports' and method == 'PUT' and len(parts) == 2:
        return 200, {'port': neutron.update_port(parts[1].split('.')[0], body.get('port', {}))}
    if name == 'ports' and method == 'DELETE' and len(parts) == 2:
        neutron.delete_port(parts[1].split('.')[0])
        return 204, None
    raise NotFound('%s %s is not in the mini-cloud stand-in' % (method, '/'.join(parts)))


NEUTRON = Neutron()


def application(environ, start_response):
    path = environ.get('PATH_INFO', '/')
    method = environ['REQUEST_METHOD']
    parts = [part for part in path.split('/') if part]
    query = urllib.parse.parse_qs(environ.get('QUERY_STRING', ''))
    length = int(environ.get('CONTENT_LENGTH') or 0)
    body = json.loads(environ['wsgi.input'].read(length) or b'{}') if length else {}
    if method == 'GET' and parts in ([], ['v2.0']):
        status, payload = 200, VERSIONS
    elif not parts or parts[0] != 'v2.0':
        status, payload = 404, {'NeutronError': {'type': 'HTTPNotFound', 'detail': '',
                                                 'message': 'not found'}}
    else:
        try:
            with NEUTRON.lock:
                status, payload = _route(NEUTRON, method, parts[1:], query, body)
        except NotFound as exc:
            status, payload = 404, {'NeutronError': {'type': 'HTTPNotFound', 'detail': '',
                                                     'message': str(exc)}}
    reasons = {200: 'OK', 201: 'Created', 204: 'No Content', 404: 'Not Found'}
    data = b'' if payload is None else json.dumps(payload).encode()
    start_response('%d %s' % (status, reasons[status]),
                   [('Content-Type', 'application/json'), ('Content-Length', str(len(data)))])
    return [data]
