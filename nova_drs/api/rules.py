"""``/loadbalancer/rules``: allow/deny rules for the hosts the loadbalancer may touch.

A rule matches hosts by a regular expression on the host name, the name of
one of its aggregates, or its availability zone; a regex that does not
compile is refused with 400 instead of breaking the daemon later.
"""

import re

from nova_drs.api import faults
from nova_drs.api import policies
from nova_drs.api import schemas
from nova_drs.api import store


class RulesController:
    """Lists, shows, creates and deletes rules."""

    def __init__(self, database):
        self.database = database

    def list(self, context):
        policies.authorize(context, policies.RULE_LIST)
        return 200, {'rules': store.list_rules(self.database)}

    def show(self, context, rule_id):
        policies.authorize(context, policies.RULE_SHOW)
        rule = store.get_rule(self.database, self._id(rule_id))
        if rule is None:
            raise faults.NotFound('rule %s not found' % rule_id[:64])
        return 200, {'rule': rule}

    def create(self, context, body):
        policies.authorize(context, policies.RULE_CREATE)
        try:
            schemas.validate(body, schemas.RULE)
        except schemas.ValidationError as exc:
            raise faults.BadRequest(str(exc)) from None
        rule = body['rule']
        try:
            re.compile(rule['value'])
        except (re.error, RecursionError, OverflowError) as exc:
            raise faults.BadRequest('invalid regular expression %r: %s'
                                    % (rule['value'][:255], exc)) from None
        return 201, {'rule': store.add_rule(self.database, rule['type'], rule['value'],
                                            rule['allow'])}

    def delete(self, context, rule_id):
        policies.authorize(context, policies.RULE_DELETE)
        if not store.delete_rule(self.database, self._id(rule_id)):
            raise faults.NotFound('rule %s not found' % rule_id[:64])
        return 204, None

    @staticmethod
    def _id(rule_id):
        if not rule_id.isascii() or not rule_id.isdigit() or len(rule_id) > 9:
            raise faults.NotFound('rule %s not found' % rule_id[:64])
        return int(rule_id)
