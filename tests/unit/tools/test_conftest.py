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

"""tests/conftest.py: what it changes in every test process."""

import sqlalchemy as sa
from sqlalchemy.engine import interfaces


def _cache_hit(url, statement):
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(statement).context.cache_hit
    finally:
        engine.dispose()


def test_a_new_sqlite_engine_reuses_what_another_compiled(tmp_path):
    """SQLAlchemy alone compiles the statement again for the second engine."""
    statement = sa.select(sa.literal_column("'conftest'").label('shared'))
    first = _cache_hit('sqlite:///%s' % (tmp_path / 'first.sqlite'), statement)
    second = _cache_hit('sqlite://', statement)
    assert (first, second) == (interfaces.CacheStats.CACHE_MISS,
                               interfaces.CacheStats.CACHE_HIT)
