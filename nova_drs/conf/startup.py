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

"""Startup checks shared by every nova-drs command that only read options.

Each check turns a configuration that cannot work into a ``ConfigError``
whose message is one line naming the option, so a command can print it and
exit 1 before it starts anything, instead of a traceback at the first read
or, worse, a daemon that silently stops acting (``place_cpu = nan`` compares
false with everything). Checks iterate over the registered options, so an
option added later is covered without an edit here. The checks that open
the database or load plugins are nova_drs.cmd.startup_checks: this package
is the bottom layer and imports nothing of nova_drs outside it.
"""

import math
import os
import re

from oslo_config import cfg
from oslo_log import log as logging

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.conf import retention

# Third-party loggers that are chatty at INFO on every command start.
QUIET_LOGGERS = ('alembic=WARN', 'stevedore=WARN', 'tooz=WARN', 'matplotlib=WARN',
                 'PIL=WARN', 'futurist=WARN')


def parse(conf, argv, prog):
    """Parse the command line and config files; unreadable files are a ConfigError.

    Command-line usage errors still exit 2 through argparse.
    """
    try:
        conf(argv, project='nova', prog=prog)
    except cfg.ConfigFilesNotFoundError as exc:
        raise exception.ConfigError('cannot read config file %s: not found or not readable'
                                    % ', '.join(exc.config_files)) from None
    except cfg.ConfigDirNotFoundError as exc:
        raise exception.ConfigError('config directory %s not found' % exc.config_dir) from None
    except cfg.ConfigFileParseError as exc:
        raise exception.ConfigError('cannot parse config file %s: %s' % (
            exc.config_file, re.sub(r'^at .*:(\d+), ', r'line \1: ', exc.msg))) from None
    except OSError as exc:
        raise exception.ConfigError('cannot read config file %s: %s'
                                    % (exc.filename, exc.strerror)) from None
    except UnicodeDecodeError as exc:
        raise exception.ConfigError('cannot read config file %s: not UTF-8 text (%s)'
                                    % (_undecodable(argv), exc.reason)) from None
    except cfg.Error as exc:
        raise exception.ConfigError(_one_line(exc)) from None
    directories = conf.config_dir or []
    for directory in [directories] if isinstance(directories, str) else directories:
        if not os.path.isdir(directory):
            raise exception.ConfigError('config directory %s is not a directory' % directory)


def _undecodable(argv):
    """The --config-file argument that is not UTF-8 (oslo.config does not say)."""
    for path in argv:
        try:
            with open(path, encoding='utf-8') as handle:
                handle.read()
        except UnicodeDecodeError:
            return path
        except (OSError, ValueError):
            continue
    return '(one of the --config-file/--config-dir files)'


def _one_line(exc):
    text = ' '.join(str(exc).split())
    # oslo.config names the option and its file LocationInfo; the caller
    # names the option already.
    return re.sub(r'^Value for option \S+ from LocationInfo\(.*?\) is not valid: ', '', text)


def _nova_drs_groups():
    return {getattr(group, 'name', group) for group, _opts in drs_conf.all_opts()}


def _non_finite(value):
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return any(_non_finite(item) for item in value)
    if isinstance(value, dict):
        return any(_non_finite(item) for item in value.values())
    return False


def _read(conf, group, name):
    """The value of one registered option, or ConfigError naming it."""
    label = '[%s] %s' % (group or 'DEFAULT', name)
    try:
        value = conf[group][name] if group else conf[name]
    except cfg.NoSuchOptError as exc:
        # The option itself is registered: the missing one is a $reference.
        where = getattr(exc.group, 'name', exc.group)
        raise exception.ConfigError('invalid value for option %s: it refers to $%s, which is not '
                                    'an option%s' % (label, exc.opt_name,
                                           ' of [%s]' % where if where else '')) from None
    except (cfg.Error, ValueError) as exc:
        raise exception.ConfigError('invalid value for option %s: %s'
                                    % (label, _one_line(exc))) from None
    except RecursionError:
        raise exception.ConfigError('invalid value for option %s: its $references form a loop'
                                    % label) from None
    if _non_finite(value):
        raise exception.ConfigError('invalid value for option %s: %s is not a finite number'
                                    % (label, value))
    return value


def validate(conf):
    """Read every option of the nova-drs groups and of [DEFAULT] once."""
    groups = _nova_drs_groups()
    for name in list(conf):
        if name in groups:
            for opt_name in list(conf[name]):
                _read(conf, name, opt_name)
        else:
            _read(conf, None, name)  # other groups only come back as a GroupAttr
    retention.check(conf)


def setup_logging(conf, prog):
    """oslo.log setup, with third-party INFO chatter off and errors as ConfigError."""
    conf.set_default('default_log_levels',
                     logging.get_default_log_levels() + list(QUIET_LOGGERS))
    try:
        logging.setup(conf, prog)
    except logging.LogConfigError as exc:
        raise exception.ConfigError('[DEFAULT] log_config_append %s: %s'
                                    % (exc.log_config, _one_line(exc.err_msg))) from None
    except OSError as exc:
        raise exception.ConfigError('cannot open log file %s: %s'
                                    % (exc.filename, exc.strerror)) from None


SIGNAL_LATENCY = 1  # seconds


def answer_signals_promptly(thread_group):
    """Wake oslo.service's eventlet hub every second.

    Its launcher runs a SIGTERM or SIGHUP handler in a green thread that
    starts only when the hub wakes up; with nothing else scheduled that is up
    to 60 s later (seen with eventlet 0.41). A no-op timer bounds it.
    """
    thread_group.add_timer(SIGNAL_LATENCY, lambda: None)
