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

"""CPU the SDK spends per listed item, for the per-host listings of a cycle.

    .venv/bin/python benchmarks/sdk_listing_cost.py [--hosts 10000] [--repeat 3]

nova-loadbalancer reads every compute service and every resource provider
each cycle. openstacksdk turns each listed item into a Resource object;
nova_api.NovaAPI reads those two listings as nova's JSON instead
(doc/source/architecture.md "One client per API"). This prints the CPU of
building the SDK's objects (and turning them back into nova's JSON, as the
pure snapshot builder reads it) against decoding the same JSON body, for
--hosts services and providers. No network: both start from the same bytes.
"""

import argparse
import json
import time
import uuid

from openstack.compute.v2 import service
from openstack.placement.v1 import resource_provider


def _bodies(hosts):
    services = {'services': [
        {'id': str(uuid.UUID(int=i)), 'host': 'host%05d' % i, 'binary': 'nova-compute',
         'zone': 'nova', 'status': 'enabled', 'state': 'up', 'forced_down': False,
         'updated_at': '2026-11-24T08:00:00.000000', 'disabled_reason': None}
        for i in range(hosts)]}
    providers = {'resource_providers': [
        {'uuid': str(uuid.UUID(int=i)), 'name': 'host%05d' % i, 'generation': 3,
         'parent_provider_uuid': None, 'root_provider_uuid': str(uuid.UUID(int=i))}
        for i in range(hosts)]}
    return json.dumps(services).encode(), json.dumps(providers).encode()


def _raw(services, providers):
    hosts = {s['host']: s for s in json.loads(services)['services']}
    generations = {p['uuid']: p['generation']
                   for p in json.loads(providers)['resource_providers']}
    return hosts, generations


def _sdk(services, providers):
    hosts = {}
    for item in json.loads(services)['services']:
        found = service.Service.existing(**item)
        hosts[found.host] = found.to_dict(computed=False, original_names=True)
    generations = {}
    for item in json.loads(providers)['resource_providers']:
        found = resource_provider.ResourceProvider.existing(**item)
        generations[found.id] = found.generation
    return hosts, generations


def _best(function, bodies, repeat):
    times = []
    for _ in range(repeat):
        start = time.process_time()
        result = function(*bodies)
        times.append(time.process_time() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hosts', type=int, default=10000)
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args()
    bodies = _bodies(args.hosts)
    raw, raw_result = _best(_raw, bodies, args.repeat)
    sdk, sdk_result = _best(_sdk, bodies, args.repeat)
    assert raw_result[1] == sdk_result[1] and raw_result[0].keys() == sdk_result[0].keys()
    print('%d compute services + %d resource providers, best of %d (CPU seconds):'
          % (args.hosts, args.hosts, args.repeat))
    print('  nova JSON decoded:          %6.2f s' % raw)
    print('  openstacksdk Resources:     %6.2f s  (%.0f us per item)'
          % (sdk, sdk / (2 * args.hosts) * 1e6))


if __name__ == '__main__':
    main()
