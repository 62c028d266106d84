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

"""The daemon's side of ``lb_requests`` (admin requests such as wake tests)."""


from oslo_utils import timeutils
import sqlalchemy as sa

from nova_drs.db import models



def open_requests(database, action):
    with database.reader() as session:
        rows = session.scalars(sa.select(models.LbRequest)
                               .filter_by(action=action)
                               .where(models.LbRequest.status.in_(('pending', 'running')))
                               .order_by(models.LbRequest.id))
        return [{'id': r.id, 'host': r.host, 'status': r.status, 'result': r.result}
                for r in rows]


def update(database, request_id, expected, status, result):
    """Compare-and-swap a request's status; True when this caller won."""
    values = {'status': status, 'result': result}
    if status in ('done', 'failed'):
        values['finished_at'] = timeutils.utcnow()
    with database.writer() as session:
        outcome = session.execute(sa.update(models.LbRequest)
                                  .where(models.LbRequest.id == request_id,
                                         models.LbRequest.status == expected)
                                  .values(**values))
        return outcome.rowcount == 1
