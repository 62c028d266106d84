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

"""The data centre of Beloglazov & Buyya (CCPE 2012), as in CloudSim's
PlanetLab examples: hosts alternate HP ML110 G4 / G5, four VM types
assigned in contiguous blocks of the sorted trace files."""

import dataclasses
import math

from nova_drs.loadbalancer import power


@dataclasses.dataclass(frozen=True)
class HostModel:
    name: str
    pes: int
    pe_mips: float
    ram_mb: int
    bandwidth_mbit: float
    curve: tuple


G4 = HostModel('hp-ml110-g4', 2, 1860.0, 4096, 1000.0, power.HP_ML110_G4)
G5 = HostModel('hp-ml110-g5', 2, 2660.0, 4096, 1000.0, power.HP_ML110_G5)
# Four G5s in one box (8 cores, 16 GB, 4x the G5 curve): the 800-host
# centre's capacity on 200 hosts, so hosts hold several VMs as in a real cluster.
G5X4 = HostModel('4x-hp-ml110-g5', 8, 2660.0, 16384, 1000.0,
                 tuple(4 * watts for watts in power.HP_ML110_G5))
HOST_MODELS = {'cloudsim': (G4, G5), 'g4': (G4,), 'g5': (G5,), 'g5x4': (G5X4,)}

# (MIPS, RAM MB) of CloudSim's four VM types; all have one vCPU.
VM_TYPES = ((2500.0, 870), (2000.0, 1740), (1000.0, 1740), (500.0, 613))
DEFAULT_HOSTS = 800
INTERVAL = 300


def host_models(count, model_name='cloudsim'):
    """Model of each host: the listed models alternate (i % len)."""
    try:
        models = HOST_MODELS[model_name]
    except KeyError:
        raise ValueError('unknown host model %r (choose from %s)'
                         % (model_name, ', '.join(sorted(HOST_MODELS)))) from None
    if count < 1:
        raise ValueError('need at least one host')
    return [models[i % len(models)] for i in range(count)]


def vm_types(count):
    """CloudSim: type = i // ceil(N / 4)."""
    block = math.ceil(count / len(VM_TYPES))
    return [VM_TYPES[i // block] for i in range(count)]


def migration_seconds(ram_mb, bandwidth_mbit):
    """Half the link carries the migration: RAM / (bandwidth / 2)."""
    return ram_mb / (bandwidth_mbit / 8.0 / 2.0)
