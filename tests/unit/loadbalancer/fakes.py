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

"""Small snapshot builders shared by the decision-core tests."""

from nova_drs.loadbalancer import model
from nova_drs.loadbalancer import power
from nova_drs.loadbalancer import state


def host(name, mips=1000.0, vcpus=4, ram_mb=8192, **kw):
    kw.setdefault('cpu_allocation_ratio', 4.0)
    kw.setdefault('ram_allocation_ratio', 1.0)
    kw.setdefault('power_curve', power.HP_ML110_G5)
    return model.Host(name=name, vcpus=vcpus, ram_mb=ram_mb, mips=mips,
                      pe_mips=mips / vcpus * 2, **kw)


def vm(uuid, host_name, demand=0.5, mips=200.0, ram_mb=512, history=None, **kw):
    hist = tuple(history) if history is not None else (demand,)
    return model.Instance(uuid=uuid, host=host_name, vcpus=1, ram_mb=ram_mb, mips=mips,
                          cpu_history=hist, **kw)


def snapshot(hosts, instances, migrations=(), now=0.0):
    return model.Snapshot(tuple(hosts), tuple(instances), tuple(migrations), now)


NO_FLOOR = model.SafetyLimits(0, 0)


def working(hosts, instances, migrations=(), limits=NO_FLOOR):
    return state.WorkingState(snapshot(hosts, instances, migrations), limits)
