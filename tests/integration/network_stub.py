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

nova needs a network endpoint even for servers booted with ``--nic none``:
live migration asks for the extension list (conductor and compute) and the
compute lists ports. This WSGI app advertises no extension and answers every
collection GET with an empty list, every other method with 404. It checks no
token: it holds nothing. Served by uwsgi like the other APIs.
"""

import json

VERSIONS = {'versions': [{'id': 'v2.0', 'status': 'CURRENT', 'links': []}]}


def _collection(path):
    """'/v2.0/ports.json' -> 'ports'; None for anything but a collection."""
    parts = [part for part in path.split('/') if part]
    if len(parts) != 2 or parts[0] != 'v2.0':
        return None
    return parts[1].split('.')[0]


def application(environ, start_response):
    path = environ.get('PATH_INFO', '/')
    method = environ['REQUEST_METHOD']
    if method == 'GET' and path.rstrip('/') in ('', '/v2.0'):
        body, status = VERSIONS, '200 OK'
    elif method == 'GET' and _collection(path):
        body, status = {_collection(path): []}, '200 OK'
    else:
        body = {'NeutronError': {'type': 'HTTPNotFound', 'detail': '',
                                 'message': 'not in the mini-cloud stand-in'}}
        status = '404 Not Found'
    payload = json.dumps(body).encode()
    start_response(status, [('Content-Type', 'application/json'),
                            ('Content-Length', str(len(payload)))])
    return [payload]
