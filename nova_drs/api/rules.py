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

"""``/loadbalancer/rules``: allow/deny rules for the hosts the loadbalancer may touch.

A rule matches hosts by a regular expression on the host name, the name of
one of its aggregates, or its availability zone; a regex that does not
compile, or whose matching time nova_drs.rule_patterns cannot bound (nested
quantifiers, backreferences, ...), is refused with 400 instead of slowing or
breaking the daemon later.
"""

import webob.exc

from nova_drs import exception
from nova_drs import rule_patterns
from nova_drs.api import schemas
from nova_drs.db import rules as db_rules


class RulesController:
    """Lists, shows, creates and deletes rules."""

    def __init__(self, database):
        self.database = database

    def list(self, context):
        return 200, {'rules': db_rules.list_all(self.database)}

    def show(self, context, rule_id):
        rule = db_rules.get(self.database, rule_id)
        if rule is None:
            raise webob.exc.HTTPNotFound('rule %d not found' % rule_id)
        return 200, {'rule': rule}

    def create(self, context, body):
        try:
            schemas.validate(body, schemas.RULE)
        except exception.ValidationError as exc:
            raise webob.exc.HTTPBadRequest(str(exc)) from None
        rule = body['rule']
        try:
            rule_patterns.compile_rule(rule['value'])
        except exception.UnsafePattern as exc:
            raise webob.exc.HTTPBadRequest('rule pattern %r refused: %s'
                                           % (rule['value'][:255], exc)) from None
        return 201, {'rule': db_rules.add(self.database, rule['type'], rule['value'],
                                          rule['allow'])}

    def delete(self, context, rule_id):
        if not db_rules.delete(self.database, rule_id):
            raise webob.exc.HTTPNotFound('rule %d not found' % rule_id)
        return 204, None
