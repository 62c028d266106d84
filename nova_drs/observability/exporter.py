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

"""The /metrics endpoint: threaded, with socket timeouts, optional TLS and
basic auth ([drs_metrics]). What it serves is metrics.py's registry."""

import base64
import contextlib
import hashlib
import hmac
import socket
import ssl
import threading
from wsgiref import simple_server

import bcrypt
from oslo_log import log as logging
import prometheus_client

from nova_drs import exception

LOG = logging.getLogger(__name__)


def tls_context(group):
    """The server-side TLS context of ``[drs_metrics]``, or None (plain HTTP)."""
    if not (group.tls_cert_file or group.tls_key_file):
        if group.tls_client_ca_file:
            raise exception.ExporterConfigError('tls_client_ca_file needs '
                                                'tls_cert_file and tls_key_file')
        return None
    if not (group.tls_cert_file and group.tls_key_file):
        raise exception.ExporterConfigError('tls_cert_file and tls_key_file go together')
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(group.tls_cert_file, group.tls_key_file)
    if group.tls_client_ca_file:
        context.load_verify_locations(cafile=group.tls_client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


class BasicAuth:
    """HTTP basic auth against one user and a bcrypt hash (exporter-toolkit style).

    bcrypt is slow on purpose; the digest of the last password that matched
    is kept, so scrapes every few seconds do not each pay for it.
    """

    def __init__(self, username, password_hash):
        self.username = username
        self.password_hash = password_hash.encode()
        self._verified = None
        self._lock = threading.Lock()

    @classmethod
    def from_conf(cls, group):
        if not (group.basic_auth_username or group.basic_auth_password_hash):
            return None
        if not (group.basic_auth_username and group.basic_auth_password_hash):
            raise exception.ExporterConfigError('basic_auth_username and '
                                                'basic_auth_password_hash go together')
        try:
            bcrypt.checkpw(b'', group.basic_auth_password_hash.encode())
        except ValueError:
            raise exception.ExporterConfigError('basic_auth_password_hash is not a '
                                                'bcrypt hash') from None
        return cls(group.basic_auth_username, group.basic_auth_password_hash)

    def allows(self, header):
        """Whether an ``Authorization`` header carries this user and password."""
        scheme, _, encoded = (header or '').partition(' ')
        if scheme.lower() != 'basic':
            return False
        try:
            username, sep, password = base64.b64decode(
                encoded.strip(), validate=True).decode('utf-8').partition(':')
        except (ValueError, UnicodeError):
            return False
        if not sep or not hmac.compare_digest(username.encode(), self.username.encode()):
            return False
        digest = hashlib.sha256(password.encode()).digest()
        with self._lock:
            if self._verified is not None and hmac.compare_digest(digest, self._verified):
                return True
        if not bcrypt.checkpw(password.encode(), self.password_hash):
            return False
        with self._lock:
            self._verified = digest
        return True

    def wrap(self, application):
        """``application`` behind this check: 401 with a challenge otherwise."""
        def authenticated(environ, start_response):
            if self.allows(environ.get('HTTP_AUTHORIZATION')):
                return application(environ, start_response)
            start_response('401 Unauthorized', [
                ('WWW-Authenticate', 'Basic realm="nova-drs metrics"'),
                ('Content-Type', 'text/plain; charset=utf-8')])
            return [b'Unauthorized\n']
        return authenticated


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):
        """Scrapes every few seconds would flood the service log."""


class MetricsServer:
    """/metrics: one thread that blocks in accept() only, one thread per connection.

    socketserver's serve_forever() polls with the select module it imported
    first; under eventlet (nova's functional fixtures, oslo.service) that is
    the unpatched one, which would freeze every green thread of the process.
    Each accepted connection gets ``client_timeout`` on its socket (TLS
    handshake included) and its own thread, at most ``max_connections`` at
    once: an idle or slow client delays no other scrape.
    """

    def __init__(self, registry, bind_host, port, tls=None, auth=None, client_timeout=10,
                 max_connections=8):
        application = prometheus_client.make_wsgi_app(registry)
        if auth is not None:
            application = auth.wrap(application)
        handler = type('MetricsHandler', (_QuietHandler,), {'timeout': client_timeout})
        self._httpd = simple_server.make_server(bind_host, port, application,
                                                handler_class=handler)
        self.server_port = self._httpd.server_port
        self._tls = tls
        self._client_timeout = client_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self._stopped = False
        self._thread = threading.Thread(target=self._serve, name='drs-metrics', daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stopped:
            try:
                request, address = self._httpd.get_request()
            except OSError:
                return
            if not self._slots.acquire(timeout=self._client_timeout):
                LOG.warning('metrics: every connection slot busy; closing the one from %s',
                            address)
                self._httpd.shutdown_request(request)
                continue
            threading.Thread(target=self._serve_one, args=(request, address),
                             name='drs-metrics-scrape', daemon=True).start()

    def _serve_one(self, request, address):
        try:
            request.settimeout(self._client_timeout)
            if self._tls is not None:
                request = self._tls.wrap_socket(request, server_side=True)
            self._httpd.process_request(request, address)
        except (OSError, ValueError) as exc:  # timeout, TLS handshake, reset
            LOG.debug('metrics: connection from %s dropped: %s', address, exc)
            self._httpd.shutdown_request(request)
        except Exception:  # one broken scrape never stops the endpoint
            LOG.exception('metrics: scrape from %s failed', address)
            self._httpd.shutdown_request(request)
        finally:
            self._slots.release()

    def shutdown(self):
        self._stopped = True
        with contextlib.suppress(OSError):
            self._httpd.socket.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
