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

import gc
import os
import sys

# Tests import helpers as ``tests.*``; make the repo root importable.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: The oldest generation is collected after this many collections of the
#: middle one (Python's default: 10). See pytest_collection_finish.
FULL_COLLECTION_EVERY = 30


def pytest_collection_finish(session):
    """Take what the test process has imported out of the garbage collector.

    Every functional test boots nova anew, and a unit or component test
    process imports nova, oslo and SQLAlchemy: hundreds of thousands of
    objects that live as long as the process. With the default settings,
    the collector's full collections rescanned them all some twenty times a
    test file, 15-20 % of the file's CPU (measured with gc.callbacks on
    tests/functional/test_scheduler_weighers.py: 2.8 s of 17 s). Once the
    tests are collected, the modules are imported: freeze them (what a
    forking server does after start-up, and the simulator's replay,
    nova_drs/sim/engine.py) and make full collections rarer. Nothing the
    tests create is exempt: cyclic garbage is still collected, later.
    """
    gc.collect()
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(threshold[0], threshold[1], FULL_COLLECTION_EVERY)
    share_compiled_sqlite_statements()


#: How many compiled statements the test process keeps (SQLAlchemy's own
#: default is 500 per engine; tests/functional/test_opt_out.py compiles 577).
COMPILED_STATEMENTS_KEPT = 5000


def share_compiled_sqlite_statements():
    """One compiled-statement cache for every SQLite engine of the process.

    SQLAlchemy caches a statement's compiled form per engine, keyed by the
    engine's dialect object. Every functional test makes new engines (nova's
    Database fixture: a new in-memory database per test and cell; ours a new
    state path), so each test compiled the same few hundred statements
    again: tests/functional/test_opt_out.py compiled 3,872 times for 29,623
    cache hits, 577 times with this (~8 % of the file's CPU). A statement
    compiled for one SQLite dialect is the same text and the same parameter
    handling for another of the same class, version and settings: those
    share one dialect object for compiling and one cache. Other databases
    (the component tier's MariaDB and PostgreSQL) keep SQLAlchemy's own.

    Installed once the tests are collected: nova's functional tests have
    then had eventlet patch the threading module the cache's lock is from.
    """
    elements = sys.modules.get('sqlalchemy.sql.elements')
    if elements is None or hasattr(elements.ClauseElement, '_per_engine_compile'):
        return
    from sqlalchemy import util
    per_engine = elements.ClauseElement._compile_w_cache
    shared = util.LRUCache(COMPILED_STATEMENTS_KEPT)
    canonical = {}

    def compile_w_shared_cache(self, dialect, *, compiled_cache, **kw):
        if compiled_cache is not None and dialect.name == 'sqlite':
            settings = (type(dialect), dialect.server_version_info, dialect.paramstyle,
                        dialect.dbapi, dialect.native_datetime,
                        dialect._json_serializer, dialect._json_deserializer)
            dialect = canonical.setdefault(settings, dialect)
            compiled_cache = shared
        return per_engine(self, dialect, compiled_cache=compiled_cache, **kw)

    elements.ClauseElement._per_engine_compile = per_engine
    elements.ClauseElement._compile_w_cache = compile_w_shared_cache
