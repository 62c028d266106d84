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

"""oslo.policy rules of the loadbalancer API, enforced by nova's enforcer.

Named rbac (who may call what): elsewhere in nova-drs "policy" is a
cluster's DRS policy or a decision algorithm.

Every rule defaults to ``role:admin``. The rules are registered into nova's
own enforcer, so operators override them in nova's policy file like any nova
rule, and ``oslopolicy-sample-generator --namespace nova_drs`` lists them.
"""

from nova import policy as nova_policy
from oslo_policy import policy
import webob.exc

PREFIX = 'nova_drs:loadbalancer:%s'
ADMIN = 'role:admin'


_RULES = []
_ACTION = '/loadbalancer/action'


def _rule(name, description, *operations):
    """Declare the rule ``name`` for ``operations`` ((method, path) pairs); its full name."""
    _RULES.append(policy.DocumentedRuleDefault(
        name=PREFIX % name, check_str=ADMIN, description=description,
        operations=[{'method': method, 'path': path} for method, path in operations],
        scope_types=['project']))
    return PREFIX % name


HOST_LIST = _rule('host:list', 'List compute hosts with their DRS state and latest statistics.',
                  ('GET', '/loadbalancer'))
HOST_SHOW = _rule('host:show', 'Show one compute host with its DRS state and latest statistics.',
                  ('GET', '/loadbalancer/{host}'))
SUSPEND_HOST = _rule(
    'suspend_host', 'Ask the DRS daemon to evacuate and suspend a host (suspend_host).',
    ('POST', _ACTION))
UNSUSPEND_HOST = _rule(
    'unsuspend_host', 'Ask the DRS daemon to wake a host, or cancel a suspend (unsuspend_host).',
    ('POST', _ACTION))
WAKE_TEST = _rule(
    'wake_test', 'Ask the DRS daemon to test that a host can be suspended and woken.',
    ('POST', _ACTION))
SET_POWER = _rule('set_power', "Set a host's power driver, mode, wake MAC and driver options.",
                  ('POST', _ACTION))
CLEAR_WAKE_FAILED = _rule(
    'clear_wake_failed',
    "Clear a host's wake_failed flag once its wake path is fixed (clear_wake_failed).",
    ('POST', _ACTION))
ENTER_MAINTENANCE = _rule(
    'enter_maintenance', 'Ask the DRS daemon to empty a host and keep it disabled and '
    'powered on (enter_maintenance).', ('POST', _ACTION))
EXIT_MAINTENANCE = _rule(
    'exit_maintenance', 'End the maintenance of a host; the DRS daemon re-enables it '
    '(exit_maintenance).', ('POST', _ACTION))
RULE_LIST = _rule('rule:list', 'List allow/deny rules.', ('GET', '/loadbalancer/rules'))
RULE_SHOW = _rule('rule:show', 'Show an allow/deny rule.',
                  ('GET', '/loadbalancer/rules/{rule_id}'))
RULE_CREATE = _rule('rule:create', 'Create an allow/deny rule.',
                    ('POST', '/loadbalancer/rules'))
RULE_DELETE = _rule('rule:delete', 'Delete an allow/deny rule.',
                    ('DELETE', '/loadbalancer/rules/{rule_id}'))
PLAN_SHOW = _rule('plan:show', 'Show the last plan of the loadbalancer, or one plan, with '
                  'its reasons and the progress of each action.',
                  ('GET', '/loadbalancer/plan'), ('GET', '/loadbalancer/plans/{plan_id}'))
PLAN_LIST = _rule('plan:list', 'List the plans of the loadbalancer (status, cluster, age).',
                  ('GET', '/loadbalancer/plans'))
PLAN_APPROVE = _rule('plan:approve', 'Approve a pending plan (manual mode).',
                     ('POST', '/loadbalancer/plan/action'))
PLAN_REJECT = _rule('plan:reject', 'Reject a pending plan (manual mode).',
                    ('POST', '/loadbalancer/plan/action'))
POLICY_LIST = _rule('policy:list',
                    'List the available loadbalancer algorithms and their parameters.',
                    ('GET', '/loadbalancer/policies'))
SCALE_SERVER = _rule(
    'scale_server', 'Ask the DRS daemon to scale a server to another flavor (scale_server).',
    ('POST', _ACTION))
SCALE_SHOW = _rule('scale:show', 'Show the progress and outcome of a scale request.',
                   ('GET', '/loadbalancer/requests/{request_id}'))
ENERGY_REPORT = _rule('energy:report',
                      'Report kWh drawn and saved, suspended host-hours and migrations.',
                      ('GET', '/loadbalancer/energy'))
EXPLAIN = _rule('explain', 'Explain why a host or server was (or was not) moved, suspended '
                'or woken in the last cycles.',
                ('GET', '/loadbalancer/explain/hosts/{host}'),
                ('GET', '/loadbalancer/explain/servers/{server_id}'))


def list_rules():
    return list(_RULES)


def _enforcer():
    """nova's enforcer with our rules registered (again after a policy reset)."""
    nova_policy.init()
    # nova exposes no public accessor that does not re-parse CONF
    # (get_enforcer() does); the module global is the enforcer nova uses.
    enforcer = nova_policy._ENFORCER
    if POLICY_LIST not in enforcer.registered_rules:
        enforcer.register_defaults(_RULES)
        enforcer.load_rules(force_reload=True)
    return enforcer


def register():
    _enforcer()


def allowed(context, rule):
    """True when ``context`` passes ``rule`` (nova's ``context.can``)."""
    _enforcer()
    return bool(context.can(rule, target={'project_id': context.project_id}, fatal=False))


def authorize(context, rule):
    """Raise Forbidden (403) unless ``context`` passes ``rule``."""
    if not allowed(context, rule):
        raise webob.exc.HTTPForbidden('policy does not allow %s' % rule)
