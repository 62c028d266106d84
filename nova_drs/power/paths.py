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

"""Files a host's power options may name: only under ``[drs_power] files_dir``.

Power options are set through the API, but the daemon opens the files they
name on its own host: an ssh key it reads, a known_hosts file it creates
and rewrites (``host_key_policy=auto_add``), a Redfish CA bundle. Left
free, an API caller could make the daemon read or truncate any file it can
reach. So a schema property marked ``"path": true`` may only name a file
inside ``files_dir``: a relative value is taken from there, ``..`` is
refused outright, and the name is resolved (symlinks followed) before it
is compared, so a link inside that points out is refused too. The API
checks when options are set (400); the daemon checks again, with its own
``files_dir``, right before it opens the file, and opens the resolved name.

Paths in the daemon's own configuration (``[drs_power]
ssh_private_key_file`` etc.) are the operator's and are not confined.
"""

import os

from oslo_log import log as logging

from nova_drs import exception
from nova_drs.power import base

LOG = logging.getLogger(__name__)

#: Words a path option that may also be a switch (redfish ``verify``) reads
#: as a boolean rather than as a file name.
TRUE_WORDS = ('true', 'yes', '1')
FALSE_WORDS = ('false', 'no', '0')


def files_dir(conf):
    """The resolved ``[drs_power] files_dir``."""
    return os.path.realpath(conf.drs_power.files_dir)


def is_switch(value):
    """Whether ``value`` of a path-or-boolean option is a boolean, not a file."""
    return isinstance(value, bool) or str(value).strip().lower() in TRUE_WORDS + FALSE_WORDS


def confine(conf, value, option):
    """The resolved path of option ``option``'s ``value``, inside ``files_dir``.

    PathError (saying which option and why) for ``..``, an empty name, or
    a name that lands outside once resolved (absolute elsewhere, or a
    symlink out). Nothing is created or opened here.
    """
    root = files_dir(conf)
    name = str(value)
    if not name.strip() or '\0' in name:
        raise exception.PathError('power option %s must name a file in [drs_power] files_dir %s'
                                  % (option, root))
    if '..' in name.replace('\\', '/').split('/'):
        raise exception.PathError('power option %s=%s: ".." is not allowed; name a file in '
                                  '[drs_power] files_dir %s' % (option, name, root))
    resolved = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, resolved]) != root or resolved == root:
        raise exception.PathError('power option %s=%s resolves to %s, outside [drs_power] '
                                  'files_dir %s' % (option, name, resolved, root))
    return resolved


def named_files(schema, options, prefix=''):
    """[(option, value)] of every file ``options`` name, nested options included.

    A file option is a property marked ``"path": true`` in ``schema`` (the
    driver's ``schema_for(options)``, which describes nested options too)
    whose value is a string that is not a switch word.
    """
    found = []
    if not isinstance(options, dict):
        return found
    for key, value in options.items():
        prop = base.child_schema(key, schema) or {}
        if isinstance(value, dict):
            found.extend(named_files(prop, value, '%s%s.' % (prefix, key)))
        elif prop.get('path') and isinstance(value, str) and not is_switch(value):
            found.append(('%s%s' % (prefix, key), value))
    return found


def check_options(driver_class, options, conf):
    """PathError unless every file ``options`` name is inside ``files_dir``."""
    for option, value in named_files(driver_class.schema_for(options), options):
        confine(conf, value, option)


def checked_path(conf, value, option, host):
    """``confine`` right before the daemon opens the file: also logs a refusal,
    naming the host."""
    try:
        return confine(conf, value, option)
    except exception.PathError as exc:
        LOG.warning('Refusing a power option of host %s: %s', host, exc)
        raise
