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

"""Bulk ingest, duplicates, purge boundaries and latest samples on the real servers.

tests/unit/stats/test_store.py's ``StoreTests`` on MariaDB and PostgreSQL.
"""

import unittest

from nova_drs.db import api
from nova_drs.db import migration
from tests import services
from tests.unit.stats.test_store import StoreTests


class ScratchStoreTests(StoreTests):
    KIND = None

    def setUp(self):
        scratch = services.ScratchDatabase(self.KIND)
        self.addCleanup(scratch.drop)
        self.db = api.Database(scratch.url)
        self.addCleanup(self.db.dispose)
        migration.sync(self.db)


class TestMariaDB(ScratchStoreTests, unittest.TestCase):
    KIND = 'mariadb'


class TestPostgreSQL(ScratchStoreTests, unittest.TestCase):
    KIND = 'postgresql'
