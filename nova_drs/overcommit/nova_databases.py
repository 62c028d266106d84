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

"""Access to nova's API and cell databases, set up as nova-manage does it.

Both ``nova-drs-manage overcommit`` and the collector (to record the ratios
an instance was deployed with) read nova's own objects; one function sets
nova up for them so they cannot drift apart (it lived in the command, and
the collector called it as a private function of the command). nova is
imported inside the function, as before, so importing this module does not
load nova.
"""


def admin_context(conf):
    """Admin context on nova's databases, as nova-manage sets them up."""
    from nova import context as nova_context
    from nova import objects
    from nova.db.api import api as api_db_api
    from nova.db.main import api as main_db_api
    from oslo_messaging import opts as messaging_opts
    from oslo_utils import importutils
    objects.register_all()
    # What nova's config.parse_args registers and nova's objects read:
    # [profiler] (DB layer, when osprofiler is installed, as in any devstack)
    # and [DEFAULT] transport_url (CellMapping).
    profiler_opts = importutils.try_import('osprofiler.opts')
    if profiler_opts and 'profiler' not in conf:
        profiler_opts.set_defaults(conf)
    conf.register_opts(dict(messaging_opts.list_opts())[None])
    if not conf.api_database.connection:
        raise RuntimeError('nova\'s [api_database] connection is not set: run with the '
                           'nova.conf of a controller (--config-file /etc/nova/nova.conf)')
    main_db_api.configure(conf)
    api_db_api.configure(conf)
    return nova_context.get_admin_context()
