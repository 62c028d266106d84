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

"""The /metrics endpoint hardened (issue 26): real sockets on 127.0.0.1."""

import base64
import datetime
import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import bcrypt
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
import pytest

from nova_drs import exception
from nova_drs.observability import metrics
from tests import config_files


@pytest.fixture
def serve(tmp_path, database):  # noqa: F811
    servers = []

    def start(text=''):
        server = metrics.serve('127.0.0.1', 0, database, config_files.load(tmp_path, text))
        servers.append(server)
        return server
    yield start
    for server in servers:
        server.shutdown()


def scrape(url, timeout=5, **kwargs):
    with urllib.request.urlopen(url, timeout=timeout, **kwargs) as response:
        return response.status, response.read().decode()


def test_an_idle_connection_does_not_block_a_scrape(serve):
    server = serve()
    with socket.create_connection(('127.0.0.1', server.server_port)) as idle:
        idle.sendall(b'GET /metr')   # and then nothing
        status, text = scrape('http://127.0.0.1:%d/metrics' % server.server_port)
    assert status == 200
    assert 'nova_drs_database_up 1.0' in text


def test_an_idle_connection_is_closed_after_client_timeout(serve):
    server = serve('[drs_metrics]\nclient_timeout = 1\n')
    with socket.create_connection(('127.0.0.1', server.server_port)) as idle:
        idle.settimeout(10)
        started = time.monotonic()
        assert idle.recv(1024) == b''   # closed by the server
    assert time.monotonic() - started < 5


def _self_signed(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'localhost')])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName('localhost')]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / 'metrics.crt', tmp_path / 'metrics.key'
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_tls_scrape_with_a_self_signed_certificate(serve, tmp_path):
    cert_file, key_file = _self_signed(tmp_path)
    server = serve('[drs_metrics]\ntls_cert_file = %s\ntls_key_file = %s\n'
                   % (cert_file, key_file))
    trusting = ssl.create_default_context(cafile=str(cert_file))
    status, text = scrape('https://localhost:%d/metrics' % server.server_port,
                          context=trusting)
    assert status == 200 and 'nova_drs_database_up 1.0' in text
    # Plain HTTP gets no metrics, and the endpoint goes on serving.
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        scrape('http://127.0.0.1:%d/metrics' % server.server_port)
    assert scrape('https://localhost:%d/metrics' % server.server_port,
                  context=trusting)[0] == 200


def test_basic_auth_is_401_without_the_right_credentials(serve):
    hashed = bcrypt.hashpw(b's3cret', bcrypt.gensalt(rounds=4)).decode()
    server = serve('[drs_metrics]\nbasic_auth_username = prometheus\n'
                   # oslo.config reads $ as a reference: each is written $$.
                   'basic_auth_password_hash = %s\n' % hashed.replace('$', '$$'))
    url = 'http://127.0.0.1:%d/metrics' % server.server_port
    with pytest.raises(urllib.error.HTTPError) as refused:
        scrape(url)
    assert refused.value.code == 401
    assert refused.value.headers['WWW-Authenticate'].startswith('Basic ')
    for user, password in (('prometheus', 'wrong'), ('other', 's3cret')):
        request = urllib.request.Request(url, headers={'Authorization': 'Basic ' + (
            base64.b64encode(('%s:%s' % (user, password)).encode()).decode())})
        with pytest.raises(urllib.error.HTTPError) as refused:
            scrape(request)
        assert refused.value.code == 401
    request = urllib.request.Request(url, headers={'Authorization': 'Basic ' + (
        base64.b64encode(b'prometheus:s3cret').decode())})
    for _ in range(2):   # the second one from the cache
        status, text = scrape(request)
        assert status == 200 and 'nova_drs_database_up 1.0' in text


@pytest.mark.parametrize('text, message', [
    ('tls_cert_file = /x.crt\n', 'tls_cert_file and tls_key_file go together'),
    ('tls_client_ca_file = /ca.crt\n', 'tls_client_ca_file needs'),
    ('basic_auth_username = p\n', 'go together'),
    ('basic_auth_username = p\nbasic_auth_password_hash = plain\n', 'not a bcrypt hash'),
])
def test_half_configured_security_is_one_clear_error(serve, text, message):
    with pytest.raises(exception.ExporterConfigError, match=message):
        serve('[drs_metrics]\n' + text)


def test_collector_with_half_set_basic_auth_is_one_line_and_exit_1(tmp_path):
    (tmp_path / 'nova.conf').write_text(
        '[drs]\nstate_path = %s\n[drs_database]\nconnection = sqlite:///%s\n'
        '[drs_metrics]\nport = 1\nbasic_auth_username = prometheus\n'
        % (tmp_path, tmp_path / 'drs.sqlite'))
    result = subprocess.run(
        [sys.executable, '-m', 'nova_drs.cmd.collector', '--config-file',
         str(tmp_path / 'nova.conf')], capture_output=True, text=True, timeout=120,
        env={**os.environ, 'PYTHONWARNINGS': 'ignore'})  # oslo.service's eventlet notice
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        'nova-drs-collector: [drs_metrics] cannot serve metrics: basic_auth_username and '
        'basic_auth_password_hash go together']
