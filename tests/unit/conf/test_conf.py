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

import subprocess
import sys

from oslo_config import cfg
import pytest

from nova_drs import conf as drs_conf
from nova_drs import exception
from nova_drs.conf import opts


def _fresh_conf():
    conf = cfg.ConfigOpts()
    drs_conf.register_opts(conf)
    return conf


def test_every_option_has_help_and_a_group():
    pairs = opts.list_opts()
    assert pairs
    names = set()
    for group, options in pairs:
        group_name = getattr(group, 'name', group)
        assert group_name.startswith('drs') or group_name == 'loadbalancer', group_name
        for opt in options:
            assert opt.help, '[%s] %s has no help' % (group_name, opt.name)
            names.add((group_name, opt.name))
    assert ('drs', 'state_path') in names
    assert ('drs_database', 'connection') in names


def test_validate_accepts_defaults():
    conf = _fresh_conf()
    conf([])
    drs_conf.validate(conf)


def test_validate_names_group_and_option(tmp_path):
    conf = _fresh_conf()
    bad = tmp_path / 'nova.conf'
    bad.write_text('[drs_database]\nmax_retries = many\n')
    conf(['--config-file', str(bad)])
    with pytest.raises(exception.ConfigError) as error:
        drs_conf.validate(conf)
    assert '[drs_database] max_retries' in str(error.value)


def test_config_generator_prints_sample():
    generator = [sys.executable, '-c',
                 'import sys; from oslo_config.generator import main; sys.exit(main())',
                 '--namespace', 'nova_drs']
    result = subprocess.run(generator, capture_output=True, text=True, check=True)
    assert '[drs]' in result.stdout
    assert '[drs_database]' in result.stdout
    assert '#state_path = /var/lib/nova-drs' in result.stdout


def test_validate_covers_options_registered_later(tmp_path):
    # Engineers add options to the groups; validation iterates what is
    # registered, so a new float is refused as nan without editing validate.
    conf = _fresh_conf()
    conf.register_opt(cfg.FloatOpt('added_later', default=1.0, min=0.0, max=2.0),
                      group='loadbalancer')
    bad = tmp_path / 'nova.conf'
    bad.write_text('[loadbalancer]\nadded_later = nan\n')
    conf(['--config-file', str(bad)])

    with pytest.raises(exception.ConfigError) as error:
        drs_conf.validate(conf)

    assert str(error.value) == ('invalid value for option [loadbalancer] added_later: '
                                'nan is not a finite number')
