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

"""Big plans survive the database: 2,000 actions stored and read back whole.

On MySQL/MariaDB ``lb_plans.actions`` was TEXT (64 KiB); migration
0009_plan_actions_mediumtext makes it MEDIUMTEXT: the real servers in
tests/component/db/test_plan_size.py, SQLite here.
"""

import pytest
import sqlalchemy as sa

from nova_drs.cmd import manage
from nova_drs.db import api
from nova_drs.db import migration
from nova_drs.db import plans
from nova_drs.loadbalancer import model

PREVIOUS_HEAD = '0008_sim_inventory'


def _actions(count):
    return [plans.Action(model.Migrate('00000000-0000-0000-0000-%012d' % i,
                                       'compute%05d' % (i % 500),
                                       'compute%05d' % (500 + i % 500),
                                       'consolidate compute%05d' % (i % 500)), 'c1',
                         plans.MANUAL) for i in range(count)]


@pytest.fixture
def scratch_url(tmp_path):
    """SQLite here; tests/component/db/test_plan_size.py runs the test again on
    the real servers, where the column size matters."""
    return 'sqlite:///%s' % (tmp_path / 'drs.sqlite')


def _db_sync(tmp_path, url):
    conf = tmp_path / 'nova.conf'
    conf.write_text('[drs_database]\nconnection = %s\n' % url)
    return manage.main(['--config-file', str(conf), 'db', 'sync'])


def test_plan_of_2000_actions_after_db_sync_from_previous_head(scratch_url, tmp_path):
    database = api.Database(scratch_url)
    try:
        migration.sync(database, PREVIOUS_HEAD)
        big = _actions(2000)
        if database.engine.dialect.name == 'mysql':
            # The defect this migration fixes: TEXT stops at 64 KiB.
            with pytest.raises(Exception, match='Data too long'):
                plans.save(database, 'manual', big, 'pending')
        assert _db_sync(tmp_path, scratch_url) == 0
        assert migration.current_revision(database) == migration.head_revision()
        plan_id = plans.save(database, 'manual', big, 'pending', cluster='c1')
        assert plans.get(database, plan_id)['actions'] == [
            dict(a.to_json(), status='pending', detail=None) for a in big]
        assert plans.set_status(database, plan_id, 'approved', 'pending')
        assert plans.approved(database) == [(plan_id, big)]
        if database.engine.dialect.name == 'mysql':
            columns = {c['name']: c['type'] for c in
                       sa.inspect(database.engine).get_columns('lb_plans')}
            assert type(columns['actions']).__name__ == 'MEDIUMTEXT'
            assert type(columns['reasons']).__name__ == 'MEDIUMTEXT'
    finally:
        database.dispose()
