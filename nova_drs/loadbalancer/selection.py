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

"""Which instance leaves an overloaded host (CloudSim VM selection)."""

from nova_drs.loadbalancer import schema
from nova_drs.loadbalancer import stats


def _candidates(state, i):
    return [j for j in state.vms[i] if state.movable[j]]


class MinimumMigrationTime:
    """MMT: the instance with the least RAM migrates fastest."""

    PARAMETERS = schema.NONE

    def select(self, state, i, rng):
        # min() keeps the first of equals, as CloudSim's strict "<" scan does.
        return min(_candidates(state, i), key=lambda j: state.vm_ram[j], default=None)


class MinimumUtilisation:
    """MU: the instance with the lowest current CPU demand."""

    PARAMETERS = schema.NONE

    def select(self, state, i, rng):
        return min(_candidates(state, i), key=lambda j: state.vm_demand[j], default=None)


class RandomSelection:
    """RS: a random instance, from the planner's seeded generator."""

    PARAMETERS = schema.NONE

    def select(self, state, i, rng):
        candidates = _candidates(state, i)
        return rng.choice(candidates) if candidates else None


class MaximumCorrelation:
    """MC: the instance whose CPU history is best explained by the others
    (highest R^2), i.e. the one most likely to peak with them; falls back to
    MMT when the regression is not defined."""

    PARAMETERS = schema.NONE

    fallback = MinimumMigrationTime()

    def select(self, state, i, rng):
        candidates = _candidates(state, i)
        if not candidates:
            return None
        histories = [state.vm_history[j] for j in state.vms[i]]
        length = min(len(h) for h in histories)
        matrix = [h[:length] for h in histories]
        best, best_r2 = None, None
        try:
            for pos, j in enumerate(state.vms[i]):
                if not state.movable[j]:
                    continue
                others = matrix[:pos] + matrix[pos + 1:]
                r2 = stats.r_squared(matrix[pos], others)
                if best is None or r2 > best_r2:
                    best, best_r2 = j, r2
        except ValueError:
            return self.fallback.select(state, i, rng)
        return best
