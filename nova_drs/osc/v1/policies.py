"""``openstack drs policy list``: installed loadbalancer algorithms."""

import json

from osc_lib.command import command


class ListPolicy(command.Lister):
    """List the installed loadbalancer algorithms with their parameters."""

    def take_action(self, parsed_args):
        columns = ('Kind', 'Name', 'Description', 'Parameters')
        return (columns, [[item['kind'], item['name'], item['description'] or item['error'],
                           json.dumps(item['parameters'], sort_keys=True)]
                          for item in self.app.client_manager.drs.list_policies()])
