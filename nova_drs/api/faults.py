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

Times leave the API as RFC 3339 date-times in UTC with the ``Z`` zone, as
nova renders a server's ``created``: the DRS database stores naive UTC
times, and a time without a zone would be read as local time by clients.
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


def isotime(value):
    """``value`` (naive: UTC) as an RFC 3339 UTC date-time, ``2026-01-02T03:04:05Z``."""
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value.isoformat() + 'Z'


def _default(value):
    if isinstance(value, datetime.datetime):
        return isotime(value)
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
