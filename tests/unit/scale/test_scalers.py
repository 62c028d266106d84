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

import pytest

from nova_drs import exception
from nova_drs.scale import scalers


class RecordingNova:
    def __init__(self):
        self.calls = []

    def resize(self, server_id, flavor_id):
        self.calls.append(('resize', server_id, flavor_id))

    def confirm_resize(self, server_id):
        self.calls.append(('confirm', server_id))

    def revert_resize(self, server_id):
        self.calls.append(('revert', server_id))


def test_resize_scaler_is_the_shipped_one():
    scaler = scalers.load('resize')
    nova = RecordingNova()
    scaler.start(nova, 'vm', 'big')
    scaler.finish(nova, 'vm')
    scaler.revert(nova, 'vm')
    assert nova.calls == [('resize', 'vm', 'big'), ('confirm', 'vm'), ('revert', 'vm')]


def test_unknown_scaler_names_the_option():
    with pytest.raises(exception.ScalerError) as error:
        scalers.load('hotplug-that-does-not-exist')
    assert "[drs_scale] scaler" in str(error.value)
