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

"""Fixtures of the host lifecycle, evacuation and orchestrator tests: a SQLite
DRS database of their own on oslo's frozen clock, and the stand-ins of
fakes.py for nova (hosts h1 and h2, enabled and up) and the power driver."""

from oslo_utils import timeutils
import pytest

from tests.unit.daemon import fakes
from tests.unit.daemon import lifecycle_steps


@pytest.fixture
def drs_db(database):
    """The unit tier's database (tests/unit/conftest.py) on oslo's clock frozen at START."""
    timeutils.set_time_override(lifecycle_steps.START)
    yield database
    timeutils.clear_time_override()


@pytest.fixture
def nova():
    nova = fakes.FakeNova()
    nova.add_service('h1')
    nova.add_service('h2')
    return nova


@pytest.fixture
def power():
    return fakes.FakePower()
