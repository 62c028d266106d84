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

"""cloud_view.build_view and stats_history.History are pure: tested without nova."""

import datetime

from nova_drs.daemon import cloud_view
from nova_drs.daemon import observe
from nova_drs.daemon import stats_history
from nova_drs.db import hosts as drs_hosts

NOW = datetime.datetime(2026, 11, 23, 12, 0, 0)


def _raw(**changes):
    services = {h: {'host': h, 'status': 'enabled', 'forced_down': False, 'zone': 'nova'}
                for h in ('a', 'b', 'c')}
    servers = {
        's1': {'id': 's1', 'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': 'a',
               'flavor': {'vcpus': 2, 'ram': 1024}},
        's2': {'id': 's2', 'status': 'SHUTOFF', 'OS-EXT-SRV-ATTR:host': 'b',
               'flavor': {'vcpus': 1, 'ram': 512}, 'OS-EXT-STS:task_state': 'migrating'},
        's3': {'id': 's3', 'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': None,
               'flavor': {'vcpus': 1, 'ram': 512}}}
    inventory = {'inventories': {'VCPU': {'total': 16, 'reserved': 2, 'allocation_ratio': 4.0},
                                 'MEMORY_MB': {'total': 8192, 'reserved': 512,
                                               'allocation_ratio': 1.0}}}
    recent = ((NOW - datetime.timedelta(seconds=60), 0.5),
              (NOW - datetime.timedelta(seconds=120), 0.2))
    raw = dict(
        services=services,
        hypervisors=[{'id': 'rp-' + h, 'service': {'host': h}} for h in ('a', 'b', 'c')],
        aggregates=[{'id': 1, 'name': 'z', 'hosts': ['a', 'b'],
                     'metadata': {'drs_policy': 'power_saving'}}],
        servers=servers,
        groups=[{'id': 'g', 'policy': 'anti-affinity', 'members': ['s1', 's2']}],
        migrations=[{'instance_uuid': 's2', 'source_compute': 'b', 'dest_compute': 'a',
                     'status': 'queued'},
                    {'instance_uuid': 's1', 'source_compute': 'a', 'dest_compute': 'b',
                     'status': 'completed'}],
        inventories={'rp-' + h: inventory for h in ('a', 'b', 'c')},
        records={h: drs_hosts.new_record(h) for h in ('a', 'b', 'c')},
        requests=[{'instance_uuid': 's9', 'source': 'c', 'destination': None}],
        host_samples={'a': recent, 'b': recent}, instance_samples={'s1': recent},
        cpu_history={'a': (0.2, 0.5), 'b': (0.2, 0.5), 's1': (0.2, 0.5)},
        suspendable={'a': True, 'b': False}, now=NOW, stats_age={'a': 60, 'b': 60})
    raw.update(changes)
    return observe.Raw(**raw)


def test_view_of_a_raw():
    view = cloud_view.build_view(_raw(), cloud_view.Rules([]), stats_max_age=600)
    hosts = {h.name: h for h in view.snapshot.hosts}
    assert hosts['a'].vcpus == 14 and hosts['a'].ram_mb == 7680
    assert hosts['a'].cpu_allocation_ratio == 4.0 and hosts['a'].cluster == 'z'
    assert hosts['c'].cluster == 'default' and hosts['c'].excluded   # no statistics
    assert view.stale_hosts == ('c',)
    assert hosts['a'].cpu_history == (0.2, 0.5) and hosts['a'].suspendable
    assert not hosts['b'].suspendable
    instances = {i.uuid: i for i in view.snapshot.instances}
    assert set(instances) == {'s1', 's2'}                  # s3 has no host
    assert instances['s1'].server_group == 'g' and instances['s1'].group_policy == \
        'anti-affinity'
    assert instances['s2'].state == 'stopped'
    # A completed migration is over; a queued one holds both ends.
    assert [(m.instance, m.source, m.destination) for m in view.snapshot.migrations] == \
        [('s2', 'b', 'a')]
    # Limits also count our evacuation that nova has not listed yet.
    assert sorted(view.in_flight, key=str) == sorted([('b', 'a'), ('c', None)], key=str)


def test_stale_statistics_and_disabled_service_exclude_a_host():
    # Judged by when the DRS database received the newest sample, not by
    # its compute's stamp (fresh here).
    raw = _raw(stats_age={'a': 601, 'b': 601})
    raw.services['b']['status'] = 'disabled'
    view = cloud_view.build_view(raw, cloud_view.Rules([]), stats_max_age=600)
    assert all(h.excluded for h in view.snapshot.hosts)
    assert {host: refusal for host, (refusal, _why) in view.excluded_by.items()} == dict.fromkeys(
        ('a', 'b', 'c'), 'stale statistics')


def test_each_excluded_host_is_named_once_with_what_excluded_it():
    """The view decides why (explain only words it): a fault of the host's own
    first, then stale statistics, a deny rule, nova; a host none applies to
    is not excluded."""
    raw = _raw(stats_age={'a': 60, 'b': 60, 'c': 60},
               faulty={'c': observe.HostFault('nova_error', 'lifecycle step: HTTP 500')})
    raw.services['a']['status'] = 'disabled'            # by someone else
    rules = cloud_view.Rules([{'id': 7, 'type': 'aggregate', 'value': 'z', 'allow': False},
                              {'id': 8, 'type': 'host', 'value': '^a$', 'allow': True}])
    view = cloud_view.build_view(raw, rules, stats_max_age=600)
    assert view.excluded_by == {
        'a': ('excluded', 'nova service disabled or forced down'),
        'b': ('rule', 'denied by rule 7 (aggregate z)'),
        'c': ('host fault', 'left out of this cycle: lifecycle step: HTTP 500')}
    assert {h.name for h in view.snapshot.hosts if h.excluded} == set(view.excluded_by)
    raw.services['a']['status'] = 'enabled'
    raw.faulty.clear()
    view = cloud_view.build_view(raw, rules, stats_max_age=600)
    assert set(view.excluded_by) == {'b'}
    assert {h.name for h in view.snapshot.hosts if h.excluded} == {'b'}


def test_history_keeps_the_newest_samples_once():
    history = stats_history.History(2)
    history.clear(datetime.timedelta(hours=1))
    assert history.start is None
    t = [NOW - datetime.timedelta(seconds=60 * i) for i in range(4)]
    history.add([('a', t[3], 10.0), ('a', t[2], 20.0)], [('i', t[1], 50.0)])
    history.add([('a', t[1], 30.0), ('a', t[1], 30.0)],
                [('i', t[0], 160.0), ('i', t[1], 50.0), ('i', t[3], None)])
    assert history.hosts['a'] == ((t[1], 0.3), (t[2], 0.2))
    assert history.instances['i'] == ((t[0], 1.0), (t[1], 0.5))
    assert history.cpu == {'a': (0.2, 0.3), 'i': (0.5, 1.0)}
    assert history.newest == t[0] and history.start < t[3]


def test_ingest_order_awaits_skipped_ids_for_a_grace_then_gives_up():
    order = stats_history.IngestOrder()
    assert order.position() is None                  # first read: the whole window
    order.advance([3, 4, 7, 9], NOW, top=9)
    assert order.position() == (9, [(5, 6), (8, 8)])
    later = NOW + stats_history.INGEST_GRACE
    order.advance([6, 8, 10, 13], later, top=13)      # 6 and 8 committed late
    assert order.position() == (13, [(5, 5), (11, 12)])
    order.advance([], later + datetime.timedelta(seconds=1), top=13)
    assert order.position() == (13, [(11, 12)])       # 5 given up after the grace
    assert order.went_back(12) and order.went_back(None) and not order.went_back(13)


def test_many_skipped_ids_are_merged_into_one_range():
    order = stats_history.IngestOrder()
    order.advance(list(range(0, 2 * stats_history.MAX_GAPS + 4, 2)), NOW, top=None)
    after, gaps = order.position()
    assert gaps == [(1, after - 1)]


def test_a_server_the_oscillation_guard_holds_is_unmovable_for_the_planner():
    # Else the core plans, cycle after cycle, to empty its host, and the
    # guard drops that suspend every time (the twin saw a host kept on 9 h).
    view = cloud_view.build_view(_raw(held_servers={'s1': 3}), cloud_view.Rules([]),
                                 stats_max_age=600)
    assert not {i.uuid: i for i in view.snapshot.instances}['s1'].movable


def test_a_suspends_planned_destination_counts_as_a_move_under_way():
    # s1 sits on a; the plan that started a's suspend sends it to b: the core
    # reserves it on b, where it is about to go, not on a guess.
    raw = _raw(evacuation_targets={'s1': ('a', 'b'), 's2': ('c', 'a')})
    view = cloud_view.build_view(raw, cloud_view.Rules([]), stats_max_age=600)
    # s2 is no longer on c (the target is stale): only s1 counts.
    assert sorted((m.instance, m.source, m.destination) for m in view.snapshot.migrations) \
        == [('s1', 'a', 'b'), ('s2', 'b', 'a')]
