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

"""The entries of a stored plan: the decision core's typed actions with the
cluster that planned them and its automation level, and their JSON form
(what ``lb_plans.actions`` holds and the API shows), written and parsed here only.
"""

import dataclasses

from nova_drs.loadbalancer import model

AUTOMATIC, MANUAL = 'automatic', 'manual'
_KINDS = {model.Migrate: 'migrate', model.Suspend: 'suspend', model.Wake: 'wake'}


@dataclasses.dataclass(frozen=True, repr=False)
class Action:
    """One action of a plan: the core's ``Migrate``, ``Suspend`` or ``Wake``,
    with the cluster that planned it and that cluster's automation level."""

    core: object
    cluster: str = None
    automation: str = AUTOMATIC
    #: Its index in its stored plan (progress rows are keyed by it); None
    #: for an action not read from a plan. Not part of what the action is.
    position: int = dataclasses.field(default=None, compare=False)

    @property
    def kind(self):
        return _KINDS[type(self.core)]

    @property
    def reason(self):
        return self.core.reason

    # A migration's fields; None for a suspend or a wake.
    instance = property(lambda self: getattr(self.core, 'instance', None))
    source = property(lambda self: getattr(self.core, 'source', None))
    destination = property(lambda self: getattr(self.core, 'destination', None))
    # A suspend's or a wake's host; None for a migration.
    host = property(lambda self: getattr(self.core, 'host', None))

    def __str__(self):
        if self.kind == 'migrate':
            return 'migrate %s %s -> %s (%s)' % (self.instance, self.source,
                                                 self.destination, self.reason)
        return '%s %s (%s)' % (self.kind, self.host, self.reason)

    def __repr__(self):
        """As the daemon's cycle line logs it: the action, its cluster and automation."""
        return '<%s [%s, %s]>' % (self, self.cluster, self.automation)

    def to_json(self):
        fields = ({'instance': self.instance, 'source': self.source,
                   'destination': self.destination} if self.kind == 'migrate'
                  else {'host': self.host})
        return dict({'type': self.kind}, **fields, reason=self.reason,
                    cluster=self.cluster, automation=self.automation)

    @classmethod
    def from_json(cls, data):
        """The Action ``to_json`` wrote; ValueError for anything else."""
        try:
            if data['type'] == 'migrate':
                core = model.Migrate(data['instance'], data['source'], data['destination'],
                                     data['reason'])
            elif data['type'] in ('suspend', 'wake'):
                kind = model.Suspend if data['type'] == 'suspend' else model.Wake
                core = kind(data['host'], data['reason'])
            else:
                raise ValueError('unknown action type %r' % data['type'])
            return cls(core, data.get('cluster'), data.get('automation', AUTOMATIC))
        except (KeyError, TypeError) as exc:
            raise ValueError('not a plan action: %r (%s)' % (data, exc)) from None
