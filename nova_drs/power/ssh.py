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

"""SSH power driver (paramiko): runs a suspend command on the host itself."""

import os

from oslo_log import log as logging
import paramiko

from nova_drs import exception
from nova_drs.power import base
from nova_drs.power import paths

LOG = logging.getLogger(__name__)

DEFAULT_COMMANDS = {
    base.MODE_S3: 'systemctl suspend',
    base.MODE_OFF: 'systemctl poweroff',
}
HOST_KEY_POLICIES = ('reject', 'auto_add')


class SshDriver(base.PowerDriver):
    """Logs in to the host with a key and runs its suspend command.

    Suspend runs ``suspend_command`` (default ``systemctl suspend`` in mode
    s3, ``systemctl poweroff`` in mode off) and fails if it exits non-zero;
    a command that has not exited after ``[drs_power] timeout`` counts as
    issued (the host is going down under it). A suspended host runs no ssh
    server, so this driver cannot wake (``can_wake`` is False): pair it with
    wol (``suspend_via: ssh``). Status: 'on' when the host accepts the login
    and ``status_command`` (if set) exits 0, else 'unknown'; never 'off',
    which ssh cannot observe. Authentication is by key only
    (``private_key_file``, default ``[drs_power] ssh_private_key_file``,
    with optional secret ``passphrase``); password login is never tried.
    Host keys are checked against ``known_hosts_file`` (default
    ``[drs_power] ssh_known_hosts_file``): unknown keys are rejected unless
    ``host_key_policy`` is ``auto_add`` (trust on first use, saved to that
    file). A host's own ``private_key_file`` and ``known_hosts_file`` must
    be in ``[drs_power] files_dir`` (``power/paths.py``), so an API caller
    cannot make the daemon read or rewrite any other file. Options:
    ``address`` (default: the host name), ``port`` (22), ``username``.
    """

    NAME = 'ssh'
    MODES = base.MODES
    OPTIONS = {
        'type': 'object',
        'additionalProperties': False,
        'required': ['username'],
        'properties': {
            'address': {'type': 'string', 'minLength': 1},
            'port': {'type': 'integer', 'minimum': 1, 'maximum': 65535},
            'username': {'type': 'string', 'minLength': 1},
            'private_key_file': {'type': 'string', 'minLength': 1, 'path': True},
            'passphrase': {'type': 'string', 'secret': True},
            'suspend_command': {'type': 'string', 'minLength': 1},
            'status_command': {'type': 'string', 'minLength': 1},
            'known_hosts_file': {'type': 'string', 'minLength': 1, 'path': True},
            'host_key_policy': {'enum': list(HOST_KEY_POLICIES)},
        },
    }

    @classmethod
    def can_wake(cls, options):
        return False

    def _file(self, target, option, default):
        """The host's file option resolved inside files_dir, else the config's ``default``."""
        value = target.options.get(option)
        if value is None:
            return default
        return paths.checked_path(self.conf, value, option, target.name)

    def _client(self, target):
        defaults = self.conf.drs_power
        known_hosts = self._file(target, 'known_hosts_file', defaults.ssh_known_hosts_file)
        policy = self.option(target, 'host_key_policy', 'reject')
        key_file = self._file(target, 'private_key_file', defaults.ssh_private_key_file)
        if not key_file:
            raise exception.PowerError('no private key: set private_key_file or '
                                       '[drs_power] ssh_private_key_file')
        passphrase = target.options.get('passphrase')
        try:
            # Positional: paramiko 5 names it password, 3.5/4.0 (2025.2, 2026.1) passphrase.
            key = paramiko.PKey.from_path(key_file, passphrase.encode() if passphrase else None)
        except (OSError, paramiko.SSHException, ValueError) as exc:
            raise exception.PowerError('cannot load private key %s: %s'
                                       % (key_file, exc)) from None
        client = paramiko.SSHClient()
        if policy == 'auto_add':
            if not os.path.exists(known_hosts):
                with open(known_hosts, 'a'):
                    pass
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        if os.path.exists(known_hosts):
            client.load_host_keys(known_hosts)
        return client, key

    def _connect(self, target):
        client, key = self._client(target)
        address = self.option(target, 'address', target.name)
        port = self.option(target, 'port', 22)
        timeout = self.conf.drs_power.timeout
        try:
            client.connect(address, port=port, username=target.options['username'], pkey=key,
                           timeout=timeout, banner_timeout=timeout, auth_timeout=timeout,
                           allow_agent=False, look_for_keys=False)
        except paramiko.BadHostKeyException:
            client.close()
            raise exception.PowerError('host key of %s:%s does not match known_hosts'
                                       % (address, port)) from None
        except paramiko.AuthenticationException:
            client.close()
            raise exception.PowerError('key authentication as %s on %s:%s failed'
                                       % (target.options['username'], address, port)) from None
        except paramiko.SSHException as exc:
            client.close()
            raise exception.PowerError('ssh to %s:%s: %s' % (address, port, exc)) from None
        return client

    def _run(self, client, command):
        """(exit status or None if still running at the timeout, stderr tail)."""
        _stdin, stdout, stderr = client.exec_command(command)
        channel = stdout.channel
        if not channel.status_event.wait(self.conf.drs_power.timeout):
            return None, ''
        return channel.recv_exit_status(), stderr.read(2000).decode(errors='replace')

    def _suspend(self, target):
        command = self.option(target, 'suspend_command', DEFAULT_COMMANDS[target.mode])
        client = self._connect(target)
        try:
            status, error = self._run(client, command)
        finally:
            client.close()
        if status is None:
            LOG.warning('Suspend command on host %s still running after %s s; '
                        'counting it as issued', target.name, self.conf.drs_power.timeout)
        elif status != 0:
            raise exception.PowerError('suspend command exited with status %s: %s'
                                       % (status, error.strip()[-500:]))

    def _wake(self, target):
        raise exception.PowerError('ssh cannot wake a host (a suspended host runs no ssh '
                                   'server); use the wol driver with suspend_via ssh')

    def _status(self, target):
        try:
            client = self._connect(target)
        except (OSError, EOFError):
            # Unreachable: suspended, off or cut off; ssh cannot tell which.
            return base.UNKNOWN
        try:
            command = target.options.get('status_command')
            if not command:
                return base.ON
            status, _error = self._run(client, command)
            return base.ON if status == 0 else base.UNKNOWN
        finally:
            client.close()
