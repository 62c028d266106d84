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

"""Prometheus metrics and the power model: groups ``[drs_metrics]``, ``[drs_energy]``.

nova-loadbalancer and nova-drs-collector each serve ``/metrics`` over HTTP
when ``[drs_metrics] port`` is set; everything the DRS database records is
read at scrape time, so both processes report the same figures.
"""

from oslo_config import cfg
from oslo_config import types

CURVE_POINTS = 11


class PowerCurve(types.List):
    """11 non-decreasing watt figures, idle (0 %) to full load (100 %)."""

    def __init__(self):
        super().__init__(item_type=types.Float(min=0), type_name='power curve')

    def __call__(self, value):
        points = super().__call__(value)
        if len(points) != CURVE_POINTS or points != sorted(points):
            raise ValueError('a power curve is %d non-decreasing watt figures for 0, '
                             '10, ..., 100 %% CPU, not %r' % (CURVE_POINTS, value))
        return points

metrics_group = cfg.OptGroup(
    'drs_metrics', title='nova-drs Prometheus metrics',
    help='The Prometheus endpoint of nova-loadbalancer and nova-drs-collector.')

metrics_opts = [
    cfg.HostAddressOpt('bind_host',
                       default='127.0.0.1',
                       help='Address the /metrics HTTP endpoint listens on.'),
    cfg.PortOpt('port',
                default=0,
                help='TCP port of the /metrics HTTP endpoint; 0 (the default) '
                     'serves no metrics. Give the daemon and the collector '
                     'different ports when they share a host.'),
    cfg.IntOpt('client_timeout',
               default=10, min=1, max=300,
               help='Seconds a scraper\'s connection may stay silent (TLS '
                    'handshake, request, reading the answer) before it is '
                    'closed. Each connection is served on its own thread, so '
                    'a slow or idle one never delays another scrape.'),
    cfg.IntOpt('max_connections',
               default=8, min=1, max=256,
               help='Connections served at once; a further one waits (at most '
                    'client_timeout) for one of them to end.'),
    cfg.StrOpt('tls_cert_file',
               help='PEM certificate (chain) of the /metrics endpoint: set with '
                    'tls_key_file to serve HTTPS only (TLS 1.2 or later), as '
                    'the Prometheus exporter-toolkit\'s tls_server_config '
                    'cert_file.'),
    cfg.StrOpt('tls_key_file',
               help='PEM private key of tls_cert_file.'),
    cfg.StrOpt('tls_client_ca_file',
               help='PEM CA bundle: when set (with TLS), a scraper must present '
                    'a client certificate it signed (exporter-toolkit\'s '
                    'client_ca_file with RequireAndVerifyClientCert).'),
    cfg.StrOpt('basic_auth_username',
               help='User name a scraper must send (HTTP basic auth); set with '
                    'basic_auth_password_hash. Without TLS the password '
                    'crosses the network in clear.'),
    cfg.StrOpt('basic_auth_password_hash',
               secret=True,
               help='bcrypt hash of the basic-auth password, as exporter-toolkit\'s '
                    'basic_auth_users (e.g. htpasswd -nBC 10 "" | tr -d \':\\n\'), '
                    'each $ written $$ (oslo.config reads $ as a reference).'),
]

energy_group = cfg.OptGroup(
    'drs_energy', title='nova-drs power model',
    help='Watts a host draws, for the power metrics and "openstack drs report '
         'energy": measured by the host\'s BMC where its power driver can '
         '(redfish: PowerConsumedWatts, ipmi: DCMI power reading), else '
         'modelled from its CPU utilisation.')

energy_opts = [
    cfg.Opt('power_curve',
            type=PowerCurve(),
            default='100,120,135,150,165,180,195,210,225,240,250',
            help='Watts drawn at 0, 10, ..., 100 % CPU utilisation (11 values, '
                 'SPECpower style, linear in between). The aggregate metadata '
                 'key "drs_power_curve" (same format) overrides it for the '
                 'aggregate\'s hosts.'),
    cfg.FloatOpt('suspended_watts',
                 default=5.0, min=0.0,
                 help='Watts a suspended or powered-off host still draws '
                      '(BMC, standby NIC).'),
    cfg.IntOpt('power_readings_per_cycle',
               default=100, min=0,
               help='Most BMCs nova-loadbalancer asks for the power drawn each '
                    'cycle (active hosts whose power driver is redfish or ipmi, '
                    'the least recently read first, 8 at a time); 0 reads none '
                    'and every figure is modelled. With N such hosts each is '
                    'read every ceil(N / this) cycles.'),
    cfg.IntOpt('reading_retention',
               default=24 * 7, min=1, max=24 * 366,
               help='Hours power readings are kept; energy reports over longer '
                    'periods fall back to the power model.'),
]


def list_opts():
    return [(metrics_group, metrics_opts), (energy_group, energy_opts)]
