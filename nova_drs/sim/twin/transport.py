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

"""How the daemon reaches the twin: its real openstacksdk Connection over a
requests transport that answers from ``cloud.Cloud`` instead of a socket."""

import contextlib
import json
import time
import urllib.parse

from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session
from openstack import connection
from oslo_utils import timeutils
import requests
import requests.adapters

from nova_drs.sim.twin import cloud as cloud_mod


class _Adapter(requests.adapters.BaseAdapter):
    """requests transport answering from the twin instead of a socket."""

    def __init__(self, cloud):
        super().__init__()
        self.cloud = cloud

    def send(self, request, timeout=None, **kwargs):
        url = urllib.parse.urlsplit(request.url)
        query = dict(urllib.parse.parse_qsl(url.query))
        body = json.loads(request.body) if request.body else None
        try:
            status, answer = self.cloud.answer(request.method, url.path, query, body)
        except cloud_mod.Hang:
            # The caller waits its read timeout (keystoneauth passes the
            # session's), in virtual time, then requests gives up.
            read = timeout[1] if isinstance(timeout, tuple) else timeout
            if read is None:
                raise RuntimeError('twin: a request without a timeout hung forever: '
                                   '%s %s' % (request.method, request.url)) from None
            timeutils.advance_time_seconds(read)
            raise requests.exceptions.ReadTimeout(
                'twin fault: %s did not answer in %s s' % (url.path, read),
                request=request) from None
        response = requests.Response()
        response.status_code = status
        response.headers['Content-Type'] = 'application/json'
        response._content = b'' if answer is None else json.dumps(answer).encode()
        response.url = request.url
        response.request = request
        response.reason = 'twin'
        return response

    def close(self):
        pass


class _VirtualTime:
    """``time`` as keystoneauth's session module sees it during a twin run."""

    def __getattr__(self, name):
        return getattr(time, name)

    @staticmethod
    def sleep(seconds):
        timeutils.advance_time_seconds(seconds)


@contextlib.contextmanager
def virtual_retry_delays():
    """keystoneauth's delay before asking again after a 503 passes on the
    virtual clock, as every other wait of the daemon in the twin."""
    real = ks_session.time
    ks_session.time = _VirtualTime()
    try:
        yield
    finally:
        ks_session.time = real


def connect(cloud, timeout=None):
    """An openstacksdk Connection whose requests the twin answers; ``timeout``
    is the session's, as production loads it from ``[drs_auth] timeout``."""
    transport = requests.Session()
    # No proxy, CA bundle or netrc from the environment can apply to the twin's
    # endpoint; requests would scan os.environ twice per request for them (a
    # fifth of a closed-loop run's CPU: 40 s -> 31 s).
    transport.trust_env = False
    transport.mount(cloud_mod.ENDPOINT, _Adapter(cloud))
    return connection.Connection(
        session=ks_session.Session(auth=noauth.NoAuth(), session=transport,
                                   timeout=timeout),
        compute_endpoint_override=cloud_mod.ENDPOINT + cloud_mod.COMPUTE,
        placement_endpoint_override=cloud_mod.ENDPOINT + cloud_mod.PLACEMENT)
