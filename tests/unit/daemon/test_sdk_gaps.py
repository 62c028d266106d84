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

"""Why the daemon pages nova's listings itself (doc/source/architecture.md).

Each test pins one fact about openstacksdk that makes its listings unfit
for the daemon. When an SDK upgrade changes the fact the test fails: that is
the moment to move that listing in ``clients/nova_api.py`` onto the SDK.
"""

from openstack.compute.v2 import hypervisor
from openstack.compute.v2 import server
from openstack.compute.v2 import server_group
import requests

from nova_drs.clients import nova_api


def _nova_page(groups):
    """A page of os-server-groups as nova sends it: no next link, ever."""
    response = requests.Response()
    response.status_code = 200
    response._content = b'{}'
    return response, {'server_groups': groups}


def test_sdk_server_groups_stop_after_novas_first_page():
    # nova pages os-server-groups by limit/offset and sends no next link;
    # the SDK's ServerGroup neither sends an offset nor asks for a second
    # page, so groups past [api] max_limit are never listed.
    assert 'offset' not in server_group.ServerGroup._query_mapping._mapping
    response, data = _nova_page([{'id': str(i)} for i in range(1000)])
    next_link, _params = server_group.ServerGroup._get_next_link(
        '/os-server-groups', response, data, marker='999', limit=None, total_yielded=1000)
    assert next_link is None


def test_sdk_hypervisor_details_ask_every_compute_for_its_uptime():
    # From 2.88 nova-api makes one RPC call per compute service to fill
    # "uptime" in os-hypervisors/detail; the SDK negotiates up to that.
    assert tuple(map(int, hypervisor.Hypervisor._max_microversion.split('.'))) >= (2, 88)
    assert tuple(map(int, nova_api.HYPERVISORS_MICROVERSION.split('.'))) < (2, 88)



def test_sdk_follows_novas_next_link_to_the_host_nova_wrote():
    # nova writes absolute next links from [api] compute_link_prefix or the
    # request it saw (http:// behind a TLS proxy); the SDK requests them as
    # they are, the daemon takes only the marker.
    href = 'http://nova-internal:8774/v2.1/servers/detail?marker=abc&limit=2'
    response, data = _nova_page([])
    data['servers_links'] = [{'rel': 'next', 'href': href}]
    next_link, params = server.Server._get_next_link(
        '/servers/detail', response, data, marker='abc', limit='2', total_yielded=2)
    assert next_link.startswith('http://nova-internal:8774/')
    assert nova_api._next_marker(data['servers_links']) == 'abc'
