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
