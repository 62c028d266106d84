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

"""The SDK's errors become the daemon's two kinds: skip the cycle, or this action failed."""

from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as sdk_exc
import pytest
import requests

from nova_drs import exception
from nova_drs.clients import nova_api


def _http_error(status, message):
    response = requests.Response()
    response.status_code = status
    response._content = ('{"conflictingRequest": {"message": "%s"}}' % message).encode()
    response.headers['Content-Type'] = 'application/json'
    response.url = 'http://nova/v2.1/servers/a/action'
    try:
        sdk_exc.raise_from_response(response)
    except sdk_exc.HttpException as exc:
        return exc
    raise AssertionError('no exception for HTTP %d' % status)


def _raised(error):
    with pytest.raises(Exception) as caught:
        with nova_api.NovaAPI(connection=None)._sdk('compute', 'POST', '/servers/a/action'):
            raise error
    return caught.value


def test_a_refusal_names_novas_reason_and_status():
    error = _raised(_http_error(409, 'Cannot live-migrate: instance is locked'))
    assert type(error) is exception.NovaRequestFailed
    assert error.status == 409
    assert 'instance is locked' in str(error)
    assert 'POST /servers/a/action' in str(error)


@pytest.mark.parametrize('error', [
    _http_error(503, 'nova-conductor is gone'),
    ks_exc.ConnectFailure('connection refused'),
    ks_exc.DiscoveryFailure('no version document'),
    sdk_exc.SDKException('endpoint not found'),
])
def test_an_unreachable_or_failing_nova_skips_the_cycle(error):
    assert type(_raised(error)) is exception.NovaUnavailable


def test_anything_else_is_not_swallowed():
    assert type(_raised(KeyError('a bug'))) is KeyError
