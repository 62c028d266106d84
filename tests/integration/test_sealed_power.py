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

"""Sealed BMC passwords on the deployed mini-cloud (doc/source/trust-model.md).

The devstack plugin made the key pair: nova-api's nova.conf has only the
public key, nova-loadbalancer's own file the private key. nova-api accepts a
password, the DRS database holds none in clear, nova-api's and
nova-scheduler's configuration cannot open it, and the daemon powers both
hosts over IPMI and Redfish with it (an admin wake test: off, then on). No
service log or configuration file contains the password.
"""

import functools
import json
import os

from oslo_config import cfg
import pytest
import sqlalchemy as sa

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.power import sealing
from tests.integration import cloud as minicloud
from tests.integration import scenario

pytestmark = pytest.mark.integration


def _drs_query(statement, **params):
    """Rows of one query on the DRS database, as any API or scheduler node could run it."""
    engine = sa.create_engine(minicloud._db_url('drs'))
    try:
        with engine.connect() as connection:
            return connection.execute(statement, params).all()
    finally:
        engine.dispose()


def _stored_options(hosts):
    return dict(_drs_query(
        sa.text('SELECT host, power_options FROM drs_hosts WHERE host IN :hosts')
        .bindparams(sa.bindparam('hosts', expanding=True)), hosts=list(hosts)))


def _wake_test_outcome(request_id):
    """(status, result) of a finished wake test (the API shows only its creation)."""
    (status, result), = _drs_query(
        sa.text('SELECT status, result FROM lb_requests WHERE id = :id'), id=request_id)
    return (status, result) if status in ('done', 'failed') else None


def _conf(*files):
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    conf([], project='nova', default_config_files=list(files))
    return conf


def test_api_nodes_seal_bmc_passwords_only_the_daemon_opens_them(cloud):
    scenario.require_daemon(cloud)
    compute = scenario.compute_client(cloud)
    hosts = {'ipmi': minicloud.COMPUTES[0], 'redfish': minicloud.COMPUTES[1]}
    for kind, host in hosts.items():
        scenario.set_power(cloud, compute, host, kind)

    stored = _stored_options(hosts.values())
    for host in hosts.values():
        assert minicloud.BMC_PASSWORD not in stored[host]
        assert sealing.is_sealed(json.loads(stored[host])['password'])

    # What every nova-api and nova-scheduler reads: the public key only.
    api = _conf(cloud.nova_conf, cloud.nova_db_conf)
    assert api.drs_power.seal_public_key_file and not api.drs_power.unseal_private_key_files
    for host in hosts.values():
        with pytest.raises(exception.SealError, match='not among'):
            sealing.unseal_options(json.loads(stored[host]), host,
                                   sealing.unsealer_from_conf(api))
    with pytest.raises(exception.SealError):
        sealing.Unsealer.from_files([api.drs_power.seal_public_key_file])
    # The daemon's configuration opens them.
    daemon = _conf(cloud.nova_conf, os.path.join(cloud.etc, 'nova-drs', 'nova-drs.conf'))
    for host in hosts.values():
        opened = sealing.unseal_options(json.loads(stored[host]), host,
                                        sealing.unsealer_from_conf(daemon))
        assert opened['password'] == minicloud.BMC_PASSWORD

    # nova-loadbalancer powers each host off and on again through its BMC.
    for kind, host in hosts.items():
        request = scenario.ok(compute.post('/loadbalancer/action',
                                           json={'wake_test': {'host': host}}), 202)['request']

        outcome = scenario.wait_for('wake test of %s over %s' % (host, kind),
                                    functools.partial(_wake_test_outcome, request['id']))
        assert outcome[0] == 'done', (kind, outcome)
        assert cloud.power_status(kind, host) == 'on'
    scenario.check_invariants(cloud, compute)

    # No service's log or configuration holds the password (the virtual BMCs
    # themselves know it: they are the other end).
    leaks = []
    for top in (cloud.logs, cloud.etc):
        for directory, _, names in os.walk(top):
            for name in names:
                if name.startswith('bmc-'):
                    continue
                with open(os.path.join(directory, name), 'rb') as handle:
                    if minicloud.BMC_PASSWORD.encode() in handle.read():
                        leaks.append(os.path.join(directory, name))
    assert leaks == []
