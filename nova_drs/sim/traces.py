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

"""Load CloudSim PlanetLab traces: one file per VM, one integer 0-100 per
line, 288 lines for a day of 300 s samples."""

import os

from nova_drs import exception


def load_directory(path, samples=288):
    """Return (sorted file names, list of per-VM fraction lists)."""
    if not os.path.isdir(path):
        raise exception.TraceError('%s: not a directory' % path)
    names = sorted(n for n in os.listdir(path)
                   if not n.startswith('.') and os.path.isfile(os.path.join(path, n)))
    if not names:
        raise exception.TraceError('%s: no trace files' % path)
    return names, [load_file(os.path.join(path, n), samples) for n in names]


def load_file(path, samples=288):
    values = []
    try:
        with open(path, encoding='utf-8') as handle:
            for number, line in enumerate(handle, 1):
                text = line.strip()
                if not text:
                    continue
                try:
                    value = int(text)
                except ValueError:
                    raise exception.TraceError('%s:%d: %r is not an integer'
                                               % (path, number, text)) from None
                if not 0 <= value <= 100:
                    raise exception.TraceError('%s:%d: %d is outside 0-100'
                                               % (path, number, value))
                values.append(value / 100.0)
                if len(values) == samples:
                    break
    except UnicodeDecodeError:
        raise exception.TraceError('%s: not a text file' % path) from None
    except OSError as exc:
        raise exception.TraceError('%s: %s' % (path, exc.strerror)) from None
    if len(values) < samples:
        raise exception.TraceError('%s: %d samples, expected %d' % (path, len(values), samples))
    return values
