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

"""``openstack drs policy list``: installed loadbalancer algorithms."""

import json

from nova_drs.osc.v1 import hosts


def parameters_text(schema):
    """``name=default unit`` per parameter, from the algorithm's JSON schema
    (``name=none`` for a parameter unset by default: no unit to a nothing)."""
    properties = (schema or {}).get('properties', {})
    return ', '.join(
        '%s=none' % name if spec.get('default') is None
        else ('%s=%s %s' % (name, json.dumps(spec['default']), spec.get('unit', ''))).strip()
        for name, spec in properties.items())


class ListPolicy(hosts.LongLister):
    """List the installed loadbalancer algorithms with their parameters."""

    long_help = "Show each parameter's full JSON schema."

    def take_action(self, parsed_args):
        columns = ('Kind', 'Name', 'Description', 'Parameters')
        show = ((lambda s: json.dumps(s, sort_keys=True)) if parsed_args.long
                else parameters_text)
        return (columns, [[item['kind'], item['name'], item['description'] or item['error'],
                           show(item['parameters'])]
                          for item in self.app.client_manager.drs.list_policies()])
