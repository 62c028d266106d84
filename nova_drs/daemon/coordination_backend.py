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

"""The tooz backend of the leader election: which URLs are safe, and calls
with a deadline.

Every backend call has a deadline (``heartbeat_interval``; ``leader_timeout``
to connect): tooz's Redis driver retries a refused connection for about a
minute, and a daemon must not hang that long.
"""

from concurrent import futures
import os
import queue
import threading
import urllib.parse

from nova_drs import exception

URL_OPTION = '[drs_coordination] backend_url'

# Schemes whose tooz lock implements is_still_owner() (see coordination.py).
HA_SCHEMES = ('redis', 'zookeeper', 'kazoo', 'memcached', 'kubernetes')
UNVERIFIABLE_SCHEMES = ('mysql', 'postgresql', 'etcd3+http', 'etcd3+https', 'ipc')
SINGLE_NODE_SCHEME = 'file'


class BackendCaller:
    """Runs backend calls on one worker thread, each with a deadline.

    A call that misses its deadline raises CoordinationError; it may still
    complete later in the background (the caller copes with that). Calls
    queued behind a hung one miss their deadline too, so nothing blocks
    longer than its own deadline.
    """

    def __init__(self, name):
        self._calls = queue.Queue()
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self):
        while (item := self._calls.get()) is not None:
            future, function, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(function(*args, **kwargs))
            except BaseException as exc:
                future.set_exception(exc)

    def call(self, deadline, function, *args, **kwargs):
        future = futures.Future()
        self._calls.put((future, function, args, kwargs))
        try:
            return future.result(deadline)
        except futures.TimeoutError:
            future.cancel()
            raise exception.CoordinationError('%s got no answer within %.1f s'
                                              % (function.__name__, deadline)) from None

    def close(self):
        self._calls.put(None)


def redact(url):
    """The URL without its password, fit for logs and error messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(':%s@' % parts.password, ':***@', 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def backend_url(conf):
    """The tooz URL to use: ``backend_url``, else the single-node file backend."""
    url = conf.drs_coordination.backend_url
    if not url:
        return 'file://' + os.path.join(conf.drs.state_path, 'coordination')
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme in UNVERIFIABLE_SCHEMES:
        raise exception.CoordinationConfigError(
            '%s uses "%s://": its tooz lock cannot confirm that the leader '
            'still holds it, so two nova-loadbalancer daemons could act at '
            'once; use one of %s' % (
                URL_OPTION, scheme, ', '.join(s + '://' for s in HA_SCHEMES)))
    if scheme not in HA_SCHEMES + (SINGLE_NODE_SCHEME,):
        raise exception.CoordinationConfigError(
            '%s = %s has an unknown scheme "%s"; use one of %s, or leave it '
            'empty for a single daemon' % (
                URL_OPTION, redact(url), scheme,
                ', '.join(s + '://' for s in HA_SCHEMES + (SINGLE_NODE_SCHEME,))))
    return url
