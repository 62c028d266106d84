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

"""The fake nova of the daemon's unit tests speaks the daemon's NovaAPI:
every method it offers exists there with the same parameters, so a test
cannot pass against a call real nova would not accept."""

import inspect
import re

from nova_drs.clients import nova_api
from nova_drs.daemon import evacuation
from nova_drs.daemon import lifecycle
from nova_drs.daemon import orchestrator
from nova_drs.daemon import plan_recovery
from tests.unit.daemon import fakes

#: FakeNova's own methods, for the tests to drive nova
TEST_SIDE = {'add_server', 'add_service', 'report', 'finish', 'fail', 'in_flight', 'called'}


def test_every_nova_method_of_the_fake_is_the_clients_with_its_signature():
    client = nova_api.NovaAPI
    offered = {name for name, _ in inspect.getmembers(fakes.FakeNova, inspect.isfunction)
               if not name.startswith('_')} - TEST_SIDE
    assert {'live_migrate', 'migrations', 'provider_usages'} <= offered
    assert offered <= set(dir(client)), offered - set(dir(client))
    for name in offered:
        assert inspect.signature(getattr(fakes.FakeNova, name)) == \
            inspect.signature(getattr(client, name)), name


def test_the_lifecycle_evacuation_and_orchestrator_calls_are_all_offered():
    used = set()
    for module in (lifecycle, evacuation, orchestrator, plan_recovery):
        used.update(re.findall(r'\bnova\.(\w+)\(', inspect.getsource(module)))
    assert {'live_migrate', 'compute_service', 'servers_on_host'} <= used
    assert {name for name in used if not hasattr(fakes.FakeNova, name)} == set()


def test_a_move_starts_on_request_and_ends_when_the_test_says():
    nova = fakes.FakeNova()
    nova.add_server('vm1', 'h1')
    nova.live_migrate('vm1')
    assert nova.server('vm1')['OS-EXT-STS:task_state'] == 'migrating'
    assert [m['status'] for m in nova.migrations(instance_uuid='vm1')] == ['running']
    assert nova.in_flight() == (('h1', fakes.SCHEDULER_CHOICE),)
    nova.finish(['vm1'])
    assert nova.server('vm1')['OS-EXT-SRV-ATTR:host'] == fakes.SCHEDULER_CHOICE
    assert [m['status'] for m in nova.migrations(instance_uuid='vm1')] == ['completed']
