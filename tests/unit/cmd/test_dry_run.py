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


"""``nova-loadbalancer --dry-run`` prints the plan the way the API shows plans."""

import json

from nova_drs.cmd import loadbalancer
from nova_drs.db import plans
from nova_drs.loadbalancer import model


def test_dry_run_prints_actions_as_the_api_shows_them():
    migrate = plans.Action(model.Migrate('vm1', 'h1', 'h2', 'overload'), 'c1')
    suspend = plans.Action(model.Suspend('h3', 'underload'), 'c1')
    printed = json.loads(loadbalancer.dry_run_report(
        {'actions': [migrate, suspend], 'stale_hosts': ['h9'], 'held': []}))
    assert printed == {'actions': [migrate.to_json(), suspend.to_json()],
                       'stale_hosts': ['h9'], 'held': []}
