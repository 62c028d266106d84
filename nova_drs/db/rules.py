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

"""Allow/deny rules (table ``lb_rules``): the API writes them, the daemon reads them."""

import sqlalchemy as sa

from nova_drs.db import models


def as_dict(row):
    return {'id': row.id, 'type': row.type, 'value': row.value, 'allow': row.allow,
            'created_at': row.created_at}


def list_all(database):
    """Every rule, oldest first."""
    with database.reader() as session:
        return [as_dict(row) for row in
                session.scalars(sa.select(models.LbRule).order_by(models.LbRule.id))]


def get(database, rule_id):
    with database.reader() as session:
        row = session.get(models.LbRule, rule_id)
        return as_dict(row) if row else None


def add(database, rule_type, value, allow):
    with database.writer() as session:
        row = models.LbRule(type=rule_type, value=value, allow=allow)
        session.add(row)
        session.flush()
        return as_dict(row)


def delete(database, rule_id):
    with database.writer() as session:
        result = session.execute(sa.delete(models.LbRule).filter_by(id=rule_id))
        return result.rowcount == 1
