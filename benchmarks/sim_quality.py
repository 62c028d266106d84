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

"""Quality benchmark: CloudSim policies and nova-drs's default on PlanetLab days.

    .venv/bin/python benchmarks/sim_quality.py [--days 20110303,20110306,20110309]
        [--policies thr_mmt_0.8,...,drs] [--jobs 2] [--traces DIR] [--reference FILE]

Prints our simulated metrics beside CloudSim 3.0.3's published figures with
the % difference, then checks the fidelity target (THR-MMT-0.8 and
LR-MMT-1.2 energy and migrations within 10 %) and the quality targets of
the drs policy (energy <= LR-MMT-1.2, SLAV <= lowest, migrations <= half
the lowest, against both the reference and our own simulated runs).
"""

import argparse
import concurrent.futures
import os
import re

from nova_drs.loadbalancer import catalog
from nova_drs.sim import engine
from nova_drs.sim import traces

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared')
DAYS = ('20110303', '20110306', '20110309')
POLICIES = catalog.CLOUDSIM_POLICIES + ('drs',)
METRICS = (('energy_kwh', 'energy kWh', '%.2f'), ('migrations', 'migrations', '%d'),
           ('slav', 'SLAV %', '%.5f'), ('slatah', 'SLATAH %', '%.2f'), ('pdm', 'PDM %', '%.3f'))
PERCENT = {'slav', 'slatah', 'pdm'}


def load_reference(path):
    """{(day, policy): metrics} from the markdown table of the reference."""
    rows = {}
    with open(path, encoding='utf-8') as handle:
        for line in handle:
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if len(cells) == 8 and re.fullmatch(r'\d{8}', cells[0]):
                rows[(cells[0], cells[1])] = {
                    'energy_kwh': float(cells[2]), 'migrations': int(cells[3]),
                    'slav': float(cells[4]) / 100, 'pdm': float(cells[5]) / 100,
                    'slatah': float(cells[6]) / 100}
    return rows


def simulate(job):
    root, day, policy = job
    names, data = traces.load_directory(os.path.join(root, day))
    result = engine.Simulation(names, data, policy).run()
    result.pop('series')
    return day, policy, result


def show(value, key, fmt):
    return fmt % (value * 100 if key in PERCENT else value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--days', default=','.join(DAYS))
    parser.add_argument('--policies', default=','.join(POLICIES))
    parser.add_argument('--jobs', type=int, default=2)
    parser.add_argument('--traces', default=os.path.join(SHARED, 'traces', 'planetlab'))
    parser.add_argument('--reference',
                        default=os.path.join(SHARED, 'reference', 'cloudsim-planetlab.md'))
    args = parser.parse_args()
    reference = load_reference(args.reference)
    jobs = [(args.traces, d, p) for d in args.days.split(',') for p in args.policies.split(',')]
    with concurrent.futures.ProcessPoolExecutor(max(args.jobs, 1)) as pool:
        results = {(d, p): r for d, p, r in pool.map(simulate, jobs)}
    print('| day | policy | ' + ' | '.join('%s ours / CloudSim (diff)' % t
                                           for _k, t, _f in METRICS) + ' | run s |')
    print('|---' * (len(METRICS) + 3) + '|')
    for (day, policy), ours in results.items():
        ref = reference.get((day, policy))
        cells = []
        for key, _title, fmt in METRICS:
            text = show(ours[key], key, fmt)
            if ref is not None:
                diff = ('%+.1f%%' % (100.0 * (ours[key] - ref[key]) / ref[key])
                        if ref[key] else 'n/a')
                text += ' / %s (%s)' % (show(ref[key], key, fmt), diff)
            cells.append(text)
        print('| %s | %s | %s | %.1f |' % (day, policy, ' | '.join(cells), ours['runtime_s']))
    print()
    for day in args.days.split(','):
        report_targets(day, results, reference)


def report_targets(day, results, reference):
    for policy in ('thr_mmt_0.8', 'lr_mmt_1.2'):
        ours, ref = results.get((day, policy)), reference.get((day, policy))
        if ours and ref:
            e = 100.0 * (ours['energy_kwh'] - ref['energy_kwh']) / ref['energy_kwh']
            m = 100.0 * (ours['migrations'] - ref['migrations']) / ref['migrations']
            verdict = 'OK' if abs(e) <= 10 and abs(m) <= 10 else 'MISSED'
            print('%s fidelity %s: energy %+.1f%%, migrations %+.1f%% -> %s'
                  % (day, policy, e, m, verdict))
    drs = results.get((day, 'drs'))
    if drs is None:
        return
    for source, table in (('CloudSim reference', reference), ('our simulation', results)):
        rivals = [table[(day, p)] for p in catalog.CLOUDSIM_POLICIES if (day, p) in table]
        lr = table.get((day, 'lr_mmt_1.2'))
        if not rivals or lr is None:
            continue
        checks = (('energy <= LR-MMT-1.2', drs['energy_kwh'] <= lr['energy_kwh']),
                  ('SLAV <= lowest', drs['slav'] <= min(r['slav'] for r in rivals)),
                  ('migrations <= half lowest',
                   drs['migrations'] <= min(r['migrations'] for r in rivals) / 2))
        print('%s drs vs %s: %s' % (day, source, ', '.join(
            '%s %s' % (name, 'OK' if ok else 'MISSED') for name, ok in checks)))


if __name__ == '__main__':
    main()
