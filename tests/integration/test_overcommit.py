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

"""Deployed-with accounting as deployed (issue 13 item 3) on the multi-process mini-cloud.

nova's real versioned notifications, over RabbitMQ, reach the shipped
``nova-drs-collector``, which records each server with the ratio its host
had when it landed; nova.conf is the one the devstack plugin's functions
produced. A fourth compute of 10 vCPUs, alone in an aggregate without
``drs_policy`` (the daemon leaves it alone), keeps the other scenarios'
hosts as they are. The operator's steps are the README's: aggregate
metadata, then ``nova-drs-manage overcommit sync``.
"""

import configparser

import pymysql
import pytest

from tests.integration import cloud as minicloud
from tests.integration import scenario

pytestmark = pytest.mark.integration

HOST = 'compute4'
VCPUS = 10
AGGREGATE = 'drs-overcommit'
PREFIX = 'drs-oc'


def _notifications_on(cloud):
    """What the recorder needs, as configure_nova_drs wrote it into nova.conf."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(cloud.nova_conf)
    assert parser.get('notifications', 'notification_format') in ('both', 'versioned')
    assert parser.get('oslo_messaging_notifications', 'driver') == 'messagingv2'


def _set_ratio(compute, aggregate, ratio):
    scenario.ok(compute.post('/os-aggregates/%s/action' % aggregate, json={
        'set_metadata': {'metadata': {'cpu_allocation_ratio': str(ratio)}}}))


def _boot(cloud, compute, name):
    """One 1-vCPU server on HOST; its final status (ACTIVE or ERROR) and fault."""
    server = scenario.ok(compute.post('/servers', json={'server': {
        'name': name, 'imageRef': cloud.image, 'flavorRef': cloud.flavor,
        'networks': 'none', 'host': HOST}}), 202)['server']

    def settled():
        current = scenario.ok(compute.get('/servers/%s' % server['id']))['server']
        return current if current['status'] in ('ACTIVE', 'ERROR') else None

    return scenario.wait_for('server %s built or refused' % name, settled, 120, 1)


def _boot_until_refused(cloud, compute, label, limit):
    """Boot one by one until the scheduler refuses: the ids that fit, the refusal."""
    fitted = []
    for index in range(limit + 1):
        server = _boot(cloud, compute, '%s-%s-%d' % (PREFIX, label, index))
        if server['status'] == 'ERROR':
            return fitted, server
        assert server['OS-EXT-SRV-ATTR:host'] == HOST, server
        fitted.append(server['id'])
    pytest.fail('%d servers fitted on %s, more than %d' % (len(fitted), HOST, limit),
                pytrace=False)


def _recorded(uuids):
    """{uuid: (cpu ratio, recorded_by)} of the DRS database's deployed-with records."""
    connection = pymysql.connect(host=minicloud.DB['host'], port=minicloud.DB['port'],
                                 user=minicloud.DB['user'], password=minicloud.DB['password'],
                                 database=minicloud.DB_PREFIX + 'drs')
    try:
        with connection.cursor() as cursor:
            cursor.execute('SELECT instance_uuid, cpu_allocation_ratio, recorded_by '
                           'FROM instance_overcommit')
            rows = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
    finally:
        connection.close()
    return {uuid: rows[uuid] for uuid in uuids if uuid in rows}


def _no_valid_host(server):
    assert server['status'] == 'ERROR', server
    assert 'No valid host' in server.get('fault', {}).get('message', ''), server


def _aggregate(compute):
    found = [a for a in scenario.ok(compute.get('/os-aggregates'))['aggregates']
             if a['name'] == AGGREGATE]
    aggregate = found[0] if found else scenario.ok(compute.post('/os-aggregates', json={
        'aggregate': {'name': AGGREGATE}}))['aggregate']
    if HOST not in (aggregate.get('hosts') or ()):
        scenario.ok(compute.post('/os-aggregates/%s/action' % aggregate['id'], json={
            'add_host': {'host': HOST}}))
    return aggregate['id']


def test_ratio_raised_then_lowered_counts_servers_at_their_deployed_ratio(cloud):
    _notifications_on(cloud)
    compute = scenario.compute_client(cloud)
    scenario.ok(compute.put('/os-quota-sets/%s' % cloud.session().get_project_id(), json={
        'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}}))
    cloud.add_compute(HOST, VCPUS)
    aggregate = _aggregate(compute)
    _set_ratio(compute, aggregate, 1.0)
    cloud.manage('overcommit', 'sync')
    first = [_boot(cloud, compute, '%s-first-%d' % (PREFIX, index)) for index in range(5)]
    assert [s['status'] for s in first] == ['ACTIVE'] * 5, first
    uuids = [s['id'] for s in first]
    # Recorded by the collector from instance.create.end, at 1.0, before any sync saw them.
    recorded = scenario.wait_for('5 servers recorded by nova-drs-collector', lambda: (
        lambda found: found if len(found) == 5 else None)(_recorded(uuids)), 60, 1)
    assert set(recorded.values()) == {(1.0, 'instance.create.end')}, recorded

    _set_ratio(compute, aggregate, 2.0)
    cloud.manage('overcommit', 'sync')
    fitted, refused = _boot_until_refused(cloud, compute, 'raised', 10)
    assert len(fitted) == 10, fitted
    _no_valid_host(refused)

    _set_ratio(compute, aggregate, 1.0)
    _no_valid_host(_boot(cloud, compute, '%s-lowered-0' % PREFIX))
    with open(cloud._log('nova-scheduler'), errors='replace') as handle:
        assert 'Host %s uses 150.0%% of its' % HOST in handle.read()
    cloud.manage('overcommit', 'sync')
    _no_valid_host(_boot(cloud, compute, '%s-lowered-1' % PREFIX))
    report = cloud.manage('overcommit', 'report')
    assert [line for line in report.splitlines()
            if HOST in line and '150.0% OVER' in line], report

    for server in scenario.list_servers(compute, '^' + PREFIX):
        scenario.ok(compute.delete('/servers/%s' % server['id']), 204)
    scenario.wait_for('%s servers deleted' % PREFIX,
                      lambda: not scenario.list_servers(compute, '^' + PREFIX), 120)
    scenario.check_invariants(cloud, compute)
