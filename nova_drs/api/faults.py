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

"""Errors of the loadbalancer API, rendered in nova's fault format.

Every error leaves the API as ``{"<faultName>": {"code": N, "message": ...}}``
with the names nova itself uses (``badRequest``, ``forbidden``,
``itemNotFound``, ``conflictingRequest``, ...), so clients that parse nova
errors (novaclient, openstacksdk) print our messages unchanged. Handlers
raise webob's ``HTTPException`` classes, as nova's do, with the message as
their detail; the API filter renders them here.
"""

import datetime
import json

import webob

FAULT_NAMES = {
    400: 'badRequest',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'itemNotFound',
    405: 'badMethod',
    409: 'conflictingRequest',
    413: 'overLimit',
    415: 'badMediaType',
    503: 'serviceUnavailable',
}


def _default(value):
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return str(value)


def json_response(body, status=200, request_id=None):
    response = webob.Response(status=status, content_type='application/json',
                              charset='UTF-8')
    if body is not None:
        response.text = json.dumps(body, default=_default)
    if request_id:
        response.headers['x-openstack-request-id'] = request_id
    return response


def error_response(code, message, request_id=None):
    name = FAULT_NAMES.get(code, 'computeFault')
    return json_response({name: {'code': code, 'message': message}},
                         status=code, request_id=request_id)
