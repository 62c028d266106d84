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

"""observe.Inventory: a host placement cannot describe is that host's fault only.

(The same on real nova and placement: tests/functional/test_host_faults.py.)
"""

import pytest

from nova_drs import exception
from nova_drs.daemon import observe


class Nova:
    """nova and placement as observe reads them: three computes, n1..n3."""

    def __init__(self):
        self.providers = {'n1': 1, 'n2': 1, 'n3': 1}
        self.inventory_errors = {}
        self.inventory_reads = []

    def compute_services(self):
        return [{'host': 'h%d' % i} for i in (1, 2, 3)]

    def hypervisors(self):
        return [{'id': 'n%d' % i, 'service': {'host': 'h%d' % i}} for i in (1, 2, 3)]

    def aggregates(self):
        return []

    server_groups = aggregates

    def migrations_in_status(self, statuses):
        return []

    def all_servers(self):
        return []

    def servers_changed_since(self, since):
        return []

    def resource_providers(self):
        return dict(self.providers)

    def concurrently(self, function, arguments):
        return {argument: function(argument) for argument in arguments}

    def provider_inventory_body(self, uuid):
        self.inventory_reads.append(uuid)
        if uuid in self.inventory_errors:
            raise self.inventory_errors[uuid]
        return {'resource_provider_generation': self.providers[uuid],
                'inventories': {'VCPU': {'total': 8}}}


def test_a_compute_node_without_resource_provider_is_its_hosts_fault():
    nova = Nova()
    del nova.providers['n1']
    inventory = observe.Inventory(nova, full_refresh_cycles=30)
    inventories = inventory.refresh()[-1]
    assert set(inventories) == {'n2', 'n3'}
    assert set(inventory.faulty) == {'h1'}
    assert inventory.faulty['h1'].kind == 'no_resource_provider'
    assert 'n1' in str(inventory.faulty['h1'])
    # kept: the next refresh reads nothing again
    nova.inventory_reads.clear()
    inventory.refresh()
    assert nova.inventory_reads == []
    assert set(inventory.faulty) == {'h1'}


@pytest.mark.parametrize('error', [exception.NovaUnavailable('GET: HTTP 503', 503),
                                   exception.NovaRequestFailed('GET: HTTP 404', 404)])
def test_one_unreadable_inventory_is_its_hosts_fault_and_read_again(error):
    nova = Nova()
    nova.inventory_errors['n2'] = error
    inventory = observe.Inventory(nova, full_refresh_cycles=30)
    assert set(inventory.refresh()[-1]) == {'n1', 'n3'}
    assert inventory.faulty['h2'].kind == 'inventory_unreadable'
    del nova.inventory_errors['n2']
    nova.inventory_reads.clear()
    assert set(inventory.refresh()[-1]) == {'n1', 'n2', 'n3'}
    assert nova.inventory_reads == ['n2']
    assert inventory.faulty == {}


def test_placement_not_answering_is_not_one_hosts_fault():
    nova = Nova()
    nova.inventory_errors['n2'] = exception.NovaUnavailable('GET: timed out')
    inventory = observe.Inventory(nova, full_refresh_cycles=30)
    with pytest.raises(exception.NovaUnavailable):
        inventory.refresh()
