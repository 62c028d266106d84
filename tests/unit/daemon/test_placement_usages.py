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

"""nova_drs.clients.placement_usages: usages with and without the SDK's method.

A real placement proxy of the installed openstacksdk answers from
requests-mock; the older SDKs' proxy is this one with the method hidden.
"""

from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session
from openstack import connection
from openstack import exceptions as sdk_exc
import pytest

from nova_drs.clients import placement_usages
from nova_drs.overcommit import placement_sync

ENDPOINT = 'http://placement.example'
RP = '4e8e5957-649f-477b-9e5b-f1f75b21c03c'
URL = '%s/resource_providers/%s/usages' % (ENDPOINT, RP)
BODY = {'resource_provider_generation': 3, 'usages': {'VCPU': 4, 'MEMORY_MB': 512}}


class OlderSdkProxy:
    """The placement proxy of openstacksdk < 4.22: no fetch_resource_provider_usages."""

    def __init__(self, proxy):
        self._proxy = proxy

    def __getattr__(self, name):
        if name == 'fetch_resource_provider_usages':
            raise AttributeError(name)
        return getattr(self._proxy, name)


@pytest.fixture
def proxy(requests_mock):
    # placement's root document, which keystoneauth reads before the first call
    requests_mock.get(ENDPOINT, json={'versions': [{
        'id': 'v1.0', 'min_version': '1.0', 'max_version': '1.39', 'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': ENDPOINT + '/'}]}]})
    cloud = connection.Connection(session=ks_session.Session(auth=noauth.NoAuth()),
                                  placement_endpoint_override=ENDPOINT)
    return cloud.placement


@pytest.fixture(params=['sdk', 'older-sdk'])
def placement(request, proxy):
    if request.param == 'sdk' and not hasattr(proxy, 'fetch_resource_provider_usages'):
        pytest.skip('this openstacksdk has no fetch_resource_provider_usages')
    return proxy if request.param == 'sdk' else OlderSdkProxy(proxy)


def test_usages_read_the_same_either_way(placement, requests_mock):
    requests_mock.get(URL, json=BODY)
    assert placement_usages.provider_usages(placement, RP) == {'VCPU': 4, 'MEMORY_MB': 512}
    assert requests_mock.last_request.url == URL


def test_no_usages_is_an_empty_dict(placement, requests_mock):
    requests_mock.get(URL, json={'resource_provider_generation': 0, 'usages': {}})
    assert placement_usages.provider_usages(placement, RP) == {}


@pytest.mark.parametrize('status', [404, 503])
def test_errors_are_the_sdks_http_exceptions(placement, requests_mock, status):
    requests_mock.get(URL, status_code=status, json={'errors': [{'detail': 'no'}]})
    with pytest.raises(sdk_exc.HttpException) as caught:
        placement_usages.provider_usages(placement, RP)
    assert caught.value.status_code == status


def test_the_overcommit_sync_reads_usages_without_the_method(proxy, requests_mock):
    requests_mock.get(URL, json=BODY)
    assert placement_sync._usage(OlderSdkProxy(proxy), RP, 'VCPU') == 4
    requests_mock.get(URL, status_code=503)
    assert placement_sync._usage(OlderSdkProxy(proxy), RP, 'VCPU') is None
