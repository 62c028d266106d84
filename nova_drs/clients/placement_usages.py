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

"""A resource provider's usages in placement, on every supported openstacksdk.

Why this exists: the placement proxy's ``fetch_resource_provider_usages``
came with openstacksdk 4.22 (2026.2); the SDKs of 2026.1 (4.10.0) and
2025.2 (4.7.2) do not have it, and without usages the daemon never finds a
host empty (``_empty_in_placement``) and never suspends one. When the
method is missing this makes the same request, ``GET
/resource_providers/{uuid}/usages``, through the same proxy (a keystoneauth
Adapter) and raises the SDK's own exceptions, so callers see one behaviour.

The one owner of the call: the daemon's client (``nova_api``) and the
overcommit sync (``nova_drs.overcommit.placement_sync``) both use it; it
imports nothing of nova_drs, so layer 3 may import it
(tests/unit/tree/test_layers.py).
"""

from openstack import exceptions as sdk_exc


def provider_usages(placement, provider_uuid):
    """{resource class: amount used} of one provider; SDKException when unreadable."""
    fetch = getattr(placement, 'fetch_resource_provider_usages', None)
    if fetch is not None:
        return dict(fetch(provider_uuid).usages or {})
    response = placement.get('/resource_providers/%s/usages' % provider_uuid,
                             raise_exc=False)
    sdk_exc.raise_from_response(response)
    return dict(response.json().get('usages') or {})
