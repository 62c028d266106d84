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

"""Host power drivers: group ``[drs_power]``.

Global defaults of the drivers in ``nova_drs/power``; a host's own
``power_options`` (stored in the DRS database) override them.
"""

from oslo_config import cfg

power_group = cfg.OptGroup(
    'drs_power', title='nova-drs host power drivers',
    help='Defaults of the drivers that suspend and wake compute hosts (wol, '
         'ipmi, redfish, ssh, noop). Per-host settings override them.')

power_opts = [
    cfg.IntOpt('timeout',
               default=30, min=1, max=600,
               help='Seconds one driver call (connect plus one request) may '
                    'take before it fails with a PowerError. IPMI uses '
                    "pyghmi's own retry schedule (about 5 s) instead."),
    cfg.HostAddressOpt('wol_broadcast_address',
                       default='255.255.255.255',
                       help='Address Wake-on-LAN magic packets are sent to '
                            'when a host sets no "broadcast" option, normally '
                            'the broadcast address of the hosts\' subnet.'),
    cfg.PortOpt('wol_port',
                default=9,
                help='UDP port of Wake-on-LAN magic packets when a host sets '
                     'no "port" option (9 = discard; some NICs use 7).'),
    cfg.StrOpt('files_dir',
               default='$drs.state_path/power',
               help='Directory every file a host\'s power options name must be '
                    'in: ssh private_key_file and known_hosts_file, a Redfish '
                    'verify CA bundle. A relative name is taken from here; ".." '
                    'and names resolving outside (symlinks followed) are '
                    'refused, by the API (400) and again by the daemon before '
                    'it opens the file. Set the same value on API nodes and '
                    'the loadbalancer host; only the daemon user should be able '
                    'to write here. The [drs_power] ssh_* and redfish_verify '
                    'defaults below are not confined.'),
    cfg.StrOpt('ssh_known_hosts_file',
               default='/etc/nova-drs/ssh_known_hosts',
               help='known_hosts file the ssh driver checks host keys '
                    'against when a host sets no "known_hosts_file" option. '
                    'Unknown host keys are rejected unless the host sets '
                    'host_key_policy=auto_add.'),
    cfg.StrOpt('ssh_private_key_file',
               help='Private key the ssh driver logs in with when a host sets '
                    'neither "private_key_file" nor "private_key". Password '
                    'authentication is never used.'),
    cfg.StrOpt('redfish_verify',
               default='true',
               help='TLS verification of Redfish BMCs when a host sets no '
                    '"verify" option: "true", "false", or the path of a CA '
                    'bundle.'),
    cfg.StrOpt('seal_public_key_file',
               help='PEM X25519 public key that secret power options (BMC '
                    'passwords, IPMI kg, ssh passphrases) are sealed with '
                    'before they are stored. Set on every nova-api node and '
                    'wherever "nova-drs-manage power seal" or "db sync" runs; '
                    'it cannot decrypt anything. Unset: the API refuses a '
                    'secret power option with a 400 naming it. '
                    '"nova-drs-manage power keygen" makes a key pair.'),
    cfg.ListOpt('unseal_private_key_files',
                default=[],
                help='PEM X25519 private keys nova-loadbalancer opens sealed '
                     'power secrets with (mode 0600, else refused). Set only '
                     'in the daemon\'s configuration, never on API or '
                     'scheduler nodes. During a key rotation list the old '
                     'and the new key; each sealed value names its key. The '
                     'daemon refuses to start while a stored secret is sealed '
                     'for a key not listed here.'),
    cfg.IntOpt('redfish_retries',
               default=1, min=1, max=10,
               help='Attempts of one Redfish request before the driver gives '
                    'up (sushy retries connection errors and 5xx answers).'),
]


def list_opts():
    return [(power_group, power_opts)]
