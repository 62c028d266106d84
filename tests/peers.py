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

"""Real protocol peers on loopback for the power driver tests.

Each peer is a separate process (its own pyghmi event loop, Flask app or
sshd) started on 127.0.0.1 on a free port and stopped by PID; the WoL peer
is a plain UDP socket. A peer that cannot start raises PeerError with the
reason and the command that installs what is missing: tests fail, never skip.

Run as a script (``python tests/peers.py ipmi-bmc ...``) this module is the
IPMI BMC process itself.
"""

import argparse
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SSHD = '/usr/sbin/sshd'
START_TIMEOUT = 30


class PeerError(RuntimeError):
    """A peer could not be started; the message says why and how to fix it."""


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class UdpListener:
    """A UDP socket on 127.0.0.1 and a random port, for Wake-on-LAN packets."""

    def __init__(self):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(('127.0.0.1', 0))
        self.port = self.socket.getsockname()[1]

    def receive(self, timeout=5):
        self.socket.settimeout(timeout)
        data, _sender = self.socket.recvfrom(4096)
        return data

    def close(self):
        self.socket.close()


class Peer:
    """A peer process: ``port`` to talk to, ``stop()`` to end it by PID."""

    def __init__(self, process, port, log_path, **details):
        self.process = process
        self.pid = process.pid
        self.port = port
        self.log_path = log_path
        self.__dict__.update(details)

    def log(self):
        with open(self.log_path, errors='replace') as log:
            return log.read()[-3000:]

    def stop(self):
        if self.process.poll() is not None:
            return
        os.kill(self.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def _spawn(argv, workdir, name, env=None):
    log_path = os.path.join(workdir, '%s.log' % name)
    log = open(log_path, 'w')
    try:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=workdir,
                                   env=env, start_new_session=True)
    finally:
        log.close()
    return process, log_path


def _wait(peer, ready, what):
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if peer.process.poll() is not None:
            raise PeerError('%s exited with status %s:\n%s'
                            % (what, peer.process.returncode, peer.log()))
        if ready():
            return peer
        time.sleep(0.2)
    peer.stop()
    raise PeerError('%s did not get ready in %s s:\n%s' % (what, START_TIMEOUT, peer.log()))


def _tcp_open(port):
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=1):
            return True
    except OSError:
        return False


# --- IPMI -------------------------------------------------------------------

def start_ipmi_bmc(workdir, username, password, power_state='on', watts=None):
    """pyghmi's BMC server in its own process; ``state_file`` shows its power.

    With ``watts`` it also answers DCMI Get Power Reading: ``watts`` while on,
    0 when off; without, that command is refused as invalid, like a BMC
    without DCMI.
    """
    state_file = os.path.join(workdir, 'bmc-power-state')
    port_file = os.path.join(workdir, 'bmc-port')
    env = dict(os.environ, FAKE_BMC_USER=username, FAKE_BMC_PASSWORD=password)
    process, log_path = _spawn(
        [sys.executable, os.path.abspath(__file__), 'ipmi-bmc', '--state-file', state_file,
         '--port-file', port_file, '--power-state', power_state]
        + ([] if watts is None else ['--watts', str(watts)]), workdir, 'ipmi-bmc', env)
    peer = Peer(process, None, log_path, state_file=state_file)

    def ready():
        if os.path.exists(port_file):
            with open(port_file) as f:
                text = f.read().strip()
            if text:
                peer.port = int(text)
                return True
        return False
    return _wait(peer, ready, 'pyghmi BMC')


def read_bmc_state(peer):
    with open(peer.state_file) as f:
        return f.read().strip()


def _run_ipmi_bmc(args):
    import pyghmi.ipmi.bmc as bmc
    from pyghmi.ipmi.private import serversession

    class Sha1OnlySession(serversession.ServerSession):
        """Rejects RMCP+ proposals other than RAKP-HMAC-SHA1.

        pyghmi's server implements cipher suite 3 only but answers every
        open-session request as if it had accepted the client's proposal;
        pyghmi's client proposes SHA-256 first and falls back to SHA-1 only
        when the BMC refuses, as real suite-3-only BMCs do (status 0x11).
        """

        def create_open_session_response(self, request):
            auth_algorithm = request[12]
            if auth_algorithm != 1:
                return bytearray([request[0], 0x11, 0, 0]) + request[4:8]
            return super().create_open_session_response(request)

    serversession.ServerSession = Sha1OnlySession

    class FileBackedBmc(bmc.Bmc):
        """Chassis power kept in a file the test reads."""

        def __init__(self, authdata):
            super().__init__(authdata, port=0, address='127.0.0.1')
            # Sessions are keyed by the server's port: use the bound one.
            self.port = self.serversocket.getsockname()[1]
            self.set_state(args.power_state)

        def set_state(self, state):
            with open(args.state_file + '.tmp', 'w') as f:
                f.write(state)
            os.replace(args.state_file + '.tmp', args.state_file)

        def get_power_state(self):
            with open(args.state_file) as f:
                return f.read().strip()

        def power_on(self):
            self.set_state('on')

        def power_off(self):
            self.set_state('off')

        def power_shutdown(self):
            self.set_state('off')

        def handle_raw_request(self, request, session):
            if request['netfn'] == 0x2c and request['command'] == 2 and args.watts is not None:
                return self.send_dcmi_power_reading(session)
            return super().handle_raw_request(request, session)

        def send_dcmi_power_reading(self, session):
            """DCMI Get Power Reading: group 0xdc, current/min/max/average watts..."""
            watts = args.watts if self.get_power_state() == 'on' else 0
            data = ([0xdc] + list(struct.pack('<HHHH', watts, watts, watts, watts))
                    + list(struct.pack('<II', int(time.time()), 1000)) + [0x40])
            session.send_ipmi_response(data=data)

    server = FileBackedBmc({os.environ['FAKE_BMC_USER']: os.environ['FAKE_BMC_PASSWORD']})
    with open(args.port_file + '.tmp', 'w') as f:
        f.write(str(server.port))
    os.replace(args.port_file + '.tmp', args.port_file)
    server.listen()


# --- Redfish ----------------------------------------------------------------

REDFISH_SYSTEM_UUID = '27946b59-9e44-4fa7-8e91-f3527a1ef094'


def start_redfish_emulator(workdir, username, password, power_state='On', watts=None):
    """sushy-tools' emulator with its fake system driver (no libvirt), basic auth.

    ``watts``: the chassis also serves a Power resource whose
    PowerConsumedWatts is ``watts`` while the system is on, 0 when off
    (sushy-tools has no Power resource of its own).
    """
    import bcrypt
    auth_file = os.path.join(workdir, 'redfish-htpasswd')
    with open(auth_file, 'w') as f:
        f.write('%s:%s\n' % (username, bcrypt.hashpw(password.encode(),
                                                      bcrypt.gensalt(rounds=4)).decode()))
    config = os.path.join(workdir, 'redfish-emulator.conf')
    systems = [{'uuid': REDFISH_SYSTEM_UUID, 'name': 'host1', 'power_state': power_state,
                'nics': []}]
    with open(config, 'w') as f:
        f.write('SUSHY_EMULATOR_AUTH_FILE = %r\n' % auth_file)
        f.write('SUSHY_EMULATOR_STATE_DIR = %r\n' % os.path.join(workdir, 'redfish-state'))
        f.write('SUSHY_EMULATOR_FAKE_SYSTEMS = %r\n' % systems)
    port = free_port()
    command = [sys.executable, os.path.abspath(__file__), 'redfish-emulator', '--config', config,
               '--port', str(port)]
    if watts is not None:
        command += ['--watts', str(watts)]
    process, log_path = _spawn(command, workdir, 'redfish-emulator')
    peer = Peer(process, port, log_path, url='http://127.0.0.1:%d' % port,
                system_id=REDFISH_SYSTEM_UUID)

    def ready():
        try:
            urllib.request.urlopen(peer.url + '/redfish/v1/', timeout=1).close()
        except urllib.error.HTTPError:
            pass  # answering, even if with 401
        except OSError:
            return False
        return True
    return _wait(peer, ready, 'sushy-emulator')


# --- SSH --------------------------------------------------------------------

def _keygen(path):
    subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'nova-drs-test',
                    '-f', path], check=True, capture_output=True)
    with open(path + '.pub') as f:
        return f.read().strip()


def start_sshd(workdir):
    """A private OpenSSH server on 127.0.0.1 for the current user, key login only.

    ``client_key`` logs in; ``known_hosts_line`` is the server's host key
    as a known_hosts entry.
    """
    if not os.path.exists(SSHD) or shutil.which('ssh-keygen') is None:
        raise PeerError('%s or ssh-keygen not found: run `apt-get install -y '
                        'openssh-server openssh-client`' % SSHD)
    if os.geteuid() == 0:
        # sshd started by root insists on its privilege separation directory.
        os.makedirs('/run/sshd', mode=0o755, exist_ok=True)
    host_key = os.path.join(workdir, 'ssh_host_ed25519_key')
    host_public = _keygen(host_key)
    client_key = os.path.join(workdir, 'client_key')
    authorized_keys = os.path.join(workdir, 'authorized_keys')
    with open(authorized_keys, 'w') as f:
        f.write(_keygen(client_key) + '\n')
    port = free_port()
    config = os.path.join(workdir, 'sshd_config')
    with open(config, 'w') as f:
        f.write('\n'.join([
            'Port %d' % port,
            'ListenAddress 127.0.0.1',
            'HostKey %s' % host_key,
            'PidFile %s' % os.path.join(workdir, 'sshd.pid'),
            'AuthorizedKeysFile %s' % authorized_keys,
            'PubkeyAuthentication yes',
            'PasswordAuthentication no',
            'KbdInteractiveAuthentication no',
            'PermitRootLogin prohibit-password',
            'UsePAM no',
            'StrictModes no',
            'LogLevel VERBOSE',
            '']))
    process, log_path = _spawn([SSHD, '-D', '-e', '-f', config], workdir, 'sshd')
    key_type, key_data = host_public.split()[:2]
    peer = Peer(process, port, log_path, client_key=client_key, authorized_keys=authorized_keys,
                known_hosts_line='[127.0.0.1]:%d %s %s' % (port, key_type, key_data))
    return _wait(peer, lambda: _tcp_open(port), 'sshd')


def add_chassis_power(app, watts_of_system):
    """Serve ``/redfish/v1/Chassis/<id>/Power`` on sushy-tools' emulator ``app``.

    PowerControl[0].PowerConsumedWatts is the sum of ``watts_of_system(identity)``
    over the systems of the first chassis (the emulator puts every system
    there), and chassis documents link to it.
    """
    import json

    import flask

    def power(identity):
        systems = app.systems.systems if app.chassis.uuid(identity) == app.chassis.chassis[0] \
            else []
        path = '/redfish/v1/Chassis/%s/Power' % identity
        return flask.jsonify({
            '@odata.type': '#Power.v1_5_0.Power', '@odata.id': path, 'Id': 'Power',
            'Name': 'Power',
            'PowerControl': [{'@odata.id': path + '#/PowerControl/0', 'MemberId': '0',
                              'Name': 'System Power Control',
                              'PowerConsumedWatts': sum(watts_of_system(s) for s in systems)}]})

    app.add_url_rule('/redfish/v1/Chassis/<identity>/Power', 'chassis_power', power)

    @app.after_request
    def link_power(response):
        parts = flask.request.path.strip('/').split('/')
        if (flask.request.method == 'GET' and response.status_code == 200
                and len(parts) == 4 and parts[:3] == ['redfish', 'v1', 'Chassis']):
            document = json.loads(response.get_data())
            document['Power'] = {'@odata.id': flask.request.path.rstrip('/') + '/Power'}
            response.set_data(json.dumps(document))
        return response


def _run_redfish_emulator(args):
    from sushy_tools.emulator import main as emulator

    if args.watts is not None:
        add_chassis_power(emulator.app, lambda system: args.watts if (
            emulator.app.systems.get_power_state(system) == 'On') else 0)
    sys.argv = ['sushy-emulator', '--config', args.config, '--fake', '-i', '127.0.0.1',
                '-p', str(args.port)]
    return emulator.main()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    bmc = commands.add_parser('ipmi-bmc', help='run the IPMI BMC peer')
    bmc.add_argument('--state-file', required=True)
    bmc.add_argument('--port-file', required=True)
    bmc.add_argument('--power-state', choices=('on', 'off'), default='on')
    bmc.add_argument('--watts', type=int,
                     help='DCMI power reading while the chassis is on')
    redfish = commands.add_parser('redfish-emulator', help='run sushy-tools\' emulator')
    redfish.add_argument('--config', required=True)
    redfish.add_argument('--port', type=int, required=True)
    redfish.add_argument('--watts', type=float,
                         help='serve a chassis Power resource with this PowerConsumedWatts')
    args = parser.parse_args()
    if args.command == 'redfish-emulator':
        sys.exit(_run_redfish_emulator(args))
    _run_ipmi_bmc(args)


if __name__ == '__main__':
    main()
