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

"""Human-readable table, JSON and a small HTML report with PNG plots."""

import html
import json
import os

COLUMNS = (('energy_kwh', 'energy kWh', '%.2f'), ('migrations', 'migrations', '%d'),
           ('slav', 'SLAV %', '%.5f'), ('pdm', 'PDM %', '%.3f'), ('slatah', 'SLATAH %', '%.2f'),
           ('esv', 'ESV', '%.5f'), ('host_shutdowns', 'shutdowns', '%d'),
           ('mean_active_hosts', 'mean active', '%.1f'),
           ('peak_active_hosts', 'peak active', '%d'),
           ('mean_load_stddev', 'load stddev %', '%.2f'), ('ping_pong', 'ping-pong', '%d'))
PERCENT = {'slav', 'pdm', 'slatah', 'mean_load_stddev'}
SERIES = (('active_hosts', 'Active hosts'), ('energy_kwh', 'Energy per step (kWh)'),
          ('overloaded_hosts', 'Hosts short of CPU (SLA)'), ('migrations', 'Migrations per step'),
          ('load_stddev', 'Standard deviation of host CPU load'))


def label(result):
    params = result.get('params') or {}
    extra = ','.join('%s=%s' % kv for kv in sorted(params.items()))
    return result['policy'] + (' [%s]' % extra if extra else '')


def cell(result, key, fmt):
    value = result[key] * (100 if key in PERCENT else 1)
    return fmt % value


def table(results):
    header = ['policy'] + [title for _key, title, _fmt in COLUMNS]
    rows = [[label(r)] + [cell(r, key, fmt) for key, _t, fmt in COLUMNS] for r in results]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    lines = ['  '.join(str(x).rjust(w) for x, w in zip(line, widths, strict=True))
             for line in [header] + rows]
    return '\n'.join(lines)


def write_json(results, path):
    with open(path, 'w', encoding='utf-8') as handle:
        json.dump(results, handle, indent=1, sort_keys=True)


def write_report(results, directory):
    """Write metrics.json, one PNG per series and index.html; returns a
    note when matplotlib is missing (then no PNGs are written)."""
    os.makedirs(directory, exist_ok=True)
    write_json(results, os.path.join(directory, 'metrics.json'))
    note = ''
    images = []
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import pyplot
    except ImportError:
        note = 'matplotlib is not installed: plots skipped (pip install matplotlib).'
    else:
        for key, title in SERIES:
            figure, axes = pyplot.subplots(figsize=(8, 3))
            for result in results:
                values = result['series'][key]
                hours = [k * result.get('interval', 300) / 3600.0 for k in range(len(values))]
                axes.plot(hours, values, label=label(result), linewidth=1)
            axes.set_title(title)
            axes.set_xlabel('hour')
            axes.legend(fontsize='small')
            figure.tight_layout()
            name = '%s.png' % key
            figure.savefig(os.path.join(directory, name), dpi=90)
            pyplot.close(figure)
            images.append((name, title))
    with open(os.path.join(directory, 'index.html'), 'w', encoding='utf-8') as handle:
        handle.write('<!DOCTYPE html><html><head><meta charset="utf-8">'
                     '<title>nova-drs simulation</title></head><body>\n'
                     '<h1>nova-drs simulation</h1>\n')
        if note:
            handle.write('<p><strong>%s</strong></p>\n' % html.escape(note))
        handle.write('<pre>%s</pre>\n' % html.escape(table(results)))
        for name, title in images:
            handle.write('<h2>%s</h2><img src="%s" alt="%s">\n'
                         % (html.escape(title), name, html.escape(title)))
        handle.write('<p>Raw numbers: <a href="metrics.json">metrics.json</a></p>'
                     '</body></html>\n')
    return note
