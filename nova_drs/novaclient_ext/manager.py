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

"""``cs.lb``: the nova-drs client (nova_drs.client) as a novaclient manager."""

import functools

from novaclient import base
from novaclient import exceptions

from nova_drs import client


class LoadBalancerManager(client.DrsClient, base.Manager):
    """novaclient finds this Manager subclass and attaches it as ``cs.lb``; the
    calls are ``DrsClient``'s, over the session and endpoint novaclient set up."""

    error = exceptions.CommandError

    def __init__(self, api):
        # novaclient builds its extension managers before its HTTP client:
        # the adapter is made on first use.
        base.Manager.__init__(self, api)

    @functools.cached_property
    def adapter(self):
        http = self.api.client
        return client.compute_adapter(http.session, auth=http.auth,
                                      region_name=http.region_name,
                                      interface=http.interface,
                                      endpoint_override=http.endpoint_override)
