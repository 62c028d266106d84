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

"""Why the daemon keeps its own nova client (doc/source/architecture.md).

Each test pins one fact about openstacksdk that makes its listings unfit
for the daemon. When an SDK upgrade changes the fact the test fails: that is
the moment to move ``daemon/nova_api.py`` onto the SDK.
"""

from openstack.compute.v2 import hypervisor
from openstack.compute.v2 import server_group
import requests

from nova_drs.daemon import nova_api


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

