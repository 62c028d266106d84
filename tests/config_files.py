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

"""Options read from a config file, as an operator sets them.

A ConfigOpts of its own per call: ``set_override`` would leak, stored on the
module-level OptGroup every ConfigOpts shares.
"""

import uuid

from oslo_config import cfg

from nova_drs import conf as drs_conf


def load(tmp_path, text='', register=drs_conf.register_opts):
    """A ConfigOpts with the options ``register`` adds (all of nova-drs's by
    default), read from a new file in ``tmp_path`` holding ``text``."""
    path = tmp_path / ('nova-%s.conf' % uuid.uuid4().hex[:8])
    path.write_text(text)
    conf = cfg.ConfigOpts()
    register(conf)
    conf(['--config-file', str(path)])
    return conf
